package restproxy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The v3 resources, in Confluent's JSON: every one has "kind", a
// "metadata" with its own URL, and "related" links to its children.

type resourceMetadata struct {
	Self         string  `json:"self"`
	ResourceName string  `json:"resource_name,omitempty"`
	Next         *string `json:"next,omitempty"`
}

type related struct {
	Related string `json:"related"`
}

type listMetadata struct {
	Self string  `json:"self"`
	Next *string `json:"next"`
}

type list[T any] struct {
	Kind     string       `json:"kind"`
	Metadata listMetadata `json:"metadata"`
	Data     []T          `json:"data"`
}

type clusterData struct {
	Kind       string           `json:"kind"`
	Metadata   resourceMetadata `json:"metadata"`
	ClusterID  string           `json:"cluster_id"`
	Controller *related         `json:"controller,omitempty"`
	Brokers    related          `json:"brokers"`
	Topics     related          `json:"topics"`
}

type topicData struct {
	Kind                   string           `json:"kind"`
	Metadata               resourceMetadata `json:"metadata"`
	ClusterID              string           `json:"cluster_id"`
	TopicName              string           `json:"topic_name"`
	IsInternal             bool             `json:"is_internal"`
	ReplicationFactor      int              `json:"replication_factor"`
	PartitionsCount        int              `json:"partitions_count"`
	Partitions             related          `json:"partitions"`
	Configs                related          `json:"configs"`
	PartitionReassignments related          `json:"partition_reassignments"`
	AuthorizedOperations   []string         `json:"authorized_operations"`
}

type partitionData struct {
	Kind         string           `json:"kind"`
	Metadata     resourceMetadata `json:"metadata"`
	ClusterID    string           `json:"cluster_id"`
	TopicName    string           `json:"topic_name"`
	PartitionID  int32            `json:"partition_id"`
	Leader       *related         `json:"leader"`
	Replicas     related          `json:"replicas"`
	Reassignment related          `json:"reassignment"`
}

// base is the URL the client reached the proxy at, for self links.
func base(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// cluster reads the broker's metadata (of topics, or all) and checks
// the path's cluster id against its.
func (p *Proxy) cluster(r *http.Request, topics ...string) (kadm.Metadata, error) {
	md, err := clients(r).adm.Metadata(r.Context(), topics...)
	if err != nil {
		return md, kafkaError(err, "asking the broker for metadata")
	}
	if id := r.PathValue("cluster"); id != "" && id != md.Cluster {
		return md, errorf(codeNotFound, "Cluster %s cannot be found.", id)
	}
	return md, nil
}

func clusterResource(r *http.Request, md kadm.Metadata) clusterData {
	self := base(r) + "/v3/clusters/" + md.Cluster
	c := clusterData{Kind: "KafkaCluster", Metadata: resourceMetadata{Self: self, ResourceName: "crn:///kafka=" + md.Cluster},
		ClusterID: md.Cluster, Brokers: related{self + "/brokers"}, Topics: related{self + "/topics"}}
	if md.Controller >= 0 {
		c.Controller = &related{fmt.Sprintf("%s/brokers/%d", self, md.Controller)}
	}
	return c
}

func (p *Proxy) listClusters(w http.ResponseWriter, r *http.Request) error {
	md, err := p.cluster(r)
	if err != nil {
		return err
	}
	writeJSON(w, v3ContentType, http.StatusOK, list[clusterData]{Kind: "KafkaClusterList",
		Metadata: listMetadata{Self: base(r) + "/v3/clusters"}, Data: []clusterData{clusterResource(r, md)}})
	return nil
}

func (p *Proxy) getCluster(w http.ResponseWriter, r *http.Request) error {
	md, err := p.cluster(r)
	if err != nil {
		return err
	}
	writeJSON(w, v3ContentType, http.StatusOK, clusterResource(r, md))
	return nil
}

func topicResource(r *http.Request, cluster string, t kadm.TopicDetail) topicData {
	self := base(r) + "/v3/clusters/" + cluster + "/topics/" + t.Topic
	rf := 0
	for _, p := range t.Partitions {
		rf = max(rf, len(p.Replicas))
	}
	return topicData{Kind: "KafkaTopic", Metadata: resourceMetadata{Self: self, ResourceName: "crn:///kafka=" + cluster + "/topic=" + t.Topic},
		ClusterID: cluster, TopicName: t.Topic, IsInternal: t.IsInternal, ReplicationFactor: rf, PartitionsCount: len(t.Partitions),
		Partitions: related{self + "/partitions"}, Configs: related{self + "/configs"},
		PartitionReassignments: related{self + "/partitions/-/reassignment"}, AuthorizedOperations: []string{}}
}

func (p *Proxy) listTopics(w http.ResponseWriter, r *http.Request) error {
	md, err := p.cluster(r)
	if err != nil {
		return err
	}
	out := list[topicData]{Kind: "KafkaTopicList", Metadata: listMetadata{Self: base(r) + r.URL.Path}, Data: []topicData{}}
	for _, name := range md.Topics.Names() {
		out.Data = append(out.Data, topicResource(r, md.Cluster, md.Topics[name]))
	}
	writeJSON(w, v3ContentType, http.StatusOK, out)
	return nil
}

// topic is the path's topic, or 404 in Confluent's words.
func (p *Proxy) topic(r *http.Request) (kadm.Metadata, kadm.TopicDetail, error) {
	name := r.PathValue("topic")
	md, err := p.cluster(r, name)
	if err != nil {
		return md, kadm.TopicDetail{}, err
	}
	t, ok := md.Topics[name]
	if !ok || t.Err != nil {
		if ok && !errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
			return md, t, kafkaError(t.Err, "topic "+name)
		}
		return md, t, errorf(codeNotFound, unknownTopicPartMesage)
	}
	return md, t, nil
}

func (p *Proxy) getTopic(w http.ResponseWriter, r *http.Request) error {
	md, t, err := p.topic(r)
	if err != nil {
		return err
	}
	writeJSON(w, v3ContentType, http.StatusOK, topicResource(r, md.Cluster, t))
	return nil
}

type createTopicRequest struct {
	TopicName         string `json:"topic_name"`
	PartitionsCount   *int32 `json:"partitions_count"`
	ReplicationFactor *int16 `json:"replication_factor"`
	Configs           []struct {
		Name  string  `json:"name"`
		Value *string `json:"value"`
	} `json:"configs"`
}

func (p *Proxy) createTopic(w http.ResponseWriter, r *http.Request) error {
	if _, err := p.cluster(r); err != nil {
		return err
	}
	var req createTopicRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.TopicName == "" {
		return errorf(codeBadRequest, "topic_name is required")
	}
	partitions, rf := int32(-1), int16(-1) // the broker's defaults
	if req.PartitionsCount != nil {
		partitions = *req.PartitionsCount
	}
	if req.ReplicationFactor != nil {
		rf = *req.ReplicationFactor
	}
	configs := map[string]*string{}
	for _, c := range req.Configs {
		configs[c.Name] = c.Value
	}
	resp, err := clients(r).adm.CreateTopic(r.Context(), partitions, rf, configs, req.TopicName)
	if err == nil {
		err = resp.Err
	}
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		return errorf(codeTopicExists, "Topic '%s' already exists.", req.TopicName)
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return kafkaError(err, "creating "+req.TopicName)
	case err != nil:
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return errorf(codeBadRequest, "%s: %s", ke.Message, resp.ErrMessage)
		}
		return err
	}
	r.SetPathValue("topic", req.TopicName)
	md, t, err := p.awaitTopic(r)
	if err != nil {
		return err
	}
	writeJSON(w, v3ContentType, http.StatusCreated, topicResource(r, md.Cluster, t))
	return nil
}

// awaitTopic reads a topic just created until its partitions show, so
// the answer describes it whole.
func (p *Proxy) awaitTopic(r *http.Request) (kadm.Metadata, kadm.TopicDetail, error) {
	for {
		md, t, err := p.topic(r)
		if err == nil && len(t.Partitions) > 0 {
			return md, t, nil
		}
		if r.Context().Err() != nil {
			return md, t, err
		}
		select {
		case <-r.Context().Done():
		case <-afterRetry():
		}
	}
}

func (p *Proxy) deleteTopic(w http.ResponseWriter, r *http.Request) error {
	if _, _, err := p.topic(r); err != nil {
		return err
	}
	resp, err := clients(r).adm.DeleteTopic(r.Context(), r.PathValue("topic"))
	if err == nil {
		err = resp.Err
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return errorf(codeNotFound, unknownTopicPartMesage)
	}
	if err != nil {
		return kafkaError(err, "deleting "+r.PathValue("topic"))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func partitionResource(r *http.Request, cluster string, pd kadm.PartitionDetail) partitionData {
	topicURL := base(r) + "/v3/clusters/" + cluster + "/topics/" + pd.Topic
	self := topicURL + "/partitions/" + strconv.Itoa(int(pd.Partition))
	out := partitionData{Kind: "KafkaPartition", Metadata: resourceMetadata{Self: self,
		ResourceName: fmt.Sprintf("crn:///kafka=%s/topic=%s/partition=%d", cluster, pd.Topic, pd.Partition)},
		ClusterID: cluster, TopicName: pd.Topic, PartitionID: pd.Partition,
		Replicas: related{self + "/replicas"}, Reassignment: related{self + "/reassignment"}}
	if pd.Leader >= 0 {
		out.Leader = &related{fmt.Sprintf("%s/replicas/%d", self, pd.Leader)}
	}
	return out
}

func (p *Proxy) listPartitions(w http.ResponseWriter, r *http.Request) error {
	md, t, err := p.topic(r)
	if err != nil {
		return err
	}
	out := list[partitionData]{Kind: "KafkaPartitionList", Metadata: listMetadata{Self: base(r) + r.URL.Path}, Data: []partitionData{}}
	for _, pd := range t.Partitions.Sorted() {
		out.Data = append(out.Data, partitionResource(r, md.Cluster, pd))
	}
	writeJSON(w, v3ContentType, http.StatusOK, out)
	return nil
}

func (p *Proxy) getPartition(w http.ResponseWriter, r *http.Request) error {
	md, t, err := p.topic(r)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("partition"))
	pd, ok := t.Partitions[int32(n)]
	if err != nil || !ok {
		return errorf(codeNotFound, unknownTopicPartMesage)
	}
	writeJSON(w, v3ContentType, http.StatusOK, partitionResource(r, md.Cluster, pd))
	return nil
}
