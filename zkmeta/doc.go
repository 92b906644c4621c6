// Package zkmeta is the cluster's metadata store: Apache Kafka 3.9's
// ZooKeeper layout, byte for byte, and a ZooKeeper client that reads and
// writes it. It is a top-level folder of its own because both the broker
// (registration, watches, admin writes) and the controller (election,
// fenced partition-state writes) use it, and because a samsa broker must
// share one ZooKeeper tree with Kafka 3.9 brokers: the znodes, their JSON
// (field names, value types and even key order) and the fencing are
// Kafka's (core/src/main/scala/kafka/zk/ZkData.scala and KafkaZkClient.scala
// at 3.9). It imports nothing of the project.
//
// # Layout
//
// Every path is under the optional chroot of zookeeper.connect
// ("h1:2181,h2:2181/kafka"), which Connect creates when missing.
//
//	znode                                       mode                 written by
//	/brokers/ids/<id>                           ephemeral            each broker (RegisterBroker); epoch = czxid
//	/brokers/seqid                              persistent           GenerateBrokerID (its version is the sequence)
//	/brokers/topics/<t>                         persistent           admin path (CreateTopic, SetAssignment)
//	/brokers/topics/<t>/partitions/<p>/state    persistent           controller only (WritePartitionStates, UpdateLeaderAndISR)
//	/controller                                 ephemeral            the elected controller (ElectController)
//	/controller_epoch                           persistent           the election; its zkVersion fences the controller
//	/config/<type>/<name>                       persistent           admin path (SetEntityConfig, CreateTopic)
//	/config/changes/config_change_<10 digits>   persistent sequence  admin path (SetEntityConfig); brokers watch
//	/admin/delete_topics/<t>                    persistent, empty    admin path (MarkTopicForDeletion); controller deletes
//	/latest_producer_id_block                   persistent           any broker, CAS (AllocateProducerIDBlock)
//	/cluster/id                                 persistent           first broker up (GetOrCreateClusterID)
//	/feature                                    persistent           controller (EnsureFeatures)
//	/consumers, /isr_change_notification,       persistent           every broker at startup (EnsurePersistentPaths)
//	/log_dir_event_notification, /config/*
//
// Config types are topics, clients, users, brokers and ips.
//
// # JSON
//
// Kafka writes each znode with Jackson from a Scala or Java map, without
// spaces, and the key order is that map's iteration order; the encoders
// here reproduce it (json.go), so what samsa writes is what Kafka 3.9.1
// writes (checked against a live 3.9.1 broker):
//
//	/brokers/ids/1     {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1796148981160"}
//	                   (with a rack, "rack":"r1" comes after "endpoints"; host/port are the first PLAINTEXT
//	                   endpoint's, null/-1 without one; features {"name":{"min_version":1,"max_version":2}})
//	/brokers/topics/t  {"partitions":{"0":[1],"1":[1]},"topic_id":"UaDBsRpES1GVlTNRDbYzDg","adding_replicas":{},"removing_replicas":{},"version":3}
//	                   (partition keys in hash order: "10" comes after "9" only below 12 partitions)
//	.../state          {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}
//	                   (+ "leader_recovery_state":1 while RECOVERING)
//	/controller        {"version":2,"brokerid":1,"timestamp":"1796148981327","kraftControllerEpoch":-1}
//	/controller_epoch  1                      (decimal text)
//	/config/topics/t   {"version":1,"config":{"retention.ms":"1000","segment.ms":"2000"}}
//	config_change_...  {"version":2,"entity_path":"topics/t"}
//	/latest_producer_id_block {"version":1,"broker":1,"block_start":"0","block_end":"999"}
//	/cluster/id        {"version":"1","id":"NjCi029yRSW5YBFV9XU7vw"}
//	/feature           {"features":{},"version":2,"status":1}
//
// Timestamps, block_start and block_end are strings; the cluster id's
// version is a string. Two orders cannot be Kafka's in every case: the
// keys of a config that share a hash bucket come in the order Kafka was
// handed them (its own JSON does not keep it), here sorted; and the
// position of "leader_recovery_state" follows from Scala's CHAMP map (all
// six keys have distinct hash fragments, as the five observed ones do). Decoders accept every version Kafka 3.9 reads
// (broker registrations 1 to 5, controller 1 and 2, config changes 1 and 2,
// features 1 and 2) and ignore unknown fields.
//
// # Fencing
//
// ElectController is one multi: create the ephemeral /controller and set
// /controller_epoch to epoch+1 at the version read; the new version of
// /controller_epoch (epochZkVersion) is the controller's token. Every
// controller write (partition states, topic deletion, resignation) is a
// multi that starts with check(/controller_epoch, epochZkVersion), so a
// controller that lost its office without knowing (a long GC pause, a
// partitioned network) cannot overwrite its successor's decisions: the
// check fails and the call returns ErrControllerMoved. Partition states
// are also compare-and-set on their own zkVersion (PartitionState.Version,
// Kafka's partition epoch), so an update based on a stale read fails with
// ErrBadVersion.
//
// # Sessions and threading
//
// A Client is one ZooKeeper session, safe for concurrent use; calls are
// pipelined on one connection and no lock is held across a round trip. A
// call made while disconnected waits for the connection (Kafka's
// retryRequestUntilConnected); after an expiry the client opens a new
// session by itself and Events reports Expired, then NewSession, so the
// owner re-registers its ephemerals and re-arms its watches. Watches are
// one-shot channels that close on the change, on session expiry, or on
// Close; the owner re-reads and re-arms.
package zkmeta
