package quota

import (
	"slices"
	"strings"
)

// Kafka's entity types and config keys.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
	TypeIP       = "ip"

	KeyProducerByteRate       = "producer_byte_rate"
	KeyConsumerByteRate       = "consumer_byte_rate"
	KeyRequestPercentage      = "request_percentage"
	KeyControllerMutationRate = "controller_mutation_rate"
	// KeyConnectionCreationRate is an ip entity's quota (KIP-612):
	// new connections per second from that address.
	KeyConnectionCreationRate = "connection_creation_rate"

	// DefaultName is how Kafka's tools and ZooKeeper paths spell the
	// default entity.
	DefaultName = "<default>"
)

// Keys lists the config keys an entity of user and/or client-id accepts.
var Keys = []string{KeyProducerByteRate, KeyConsumerByteRate, KeyRequestPercentage, KeyControllerMutationRate}

// IPKeys lists the config keys an ip entity accepts.
var IPKeys = []string{KeyConnectionCreationRate}

// KeysOf lists the config keys e accepts.
func KeysOf(e Entity) []string {
	if e.IP.Present {
		return IPKeys
	}
	return Keys
}

// IsKey reports whether key is a client quota key.
func IsKey(key string) bool { return slices.Contains(Keys, key) }

// isWhole reports whether key's values are whole numbers: Kafka's LONG
// and INT quota configs (the others are DOUBLE).
func isWhole(key string) bool {
	return key == KeyProducerByteRate || key == KeyConsumerByteRate || key == KeyConnectionCreationRate
}

// Part is one component of an entity: absent, the <default> entity, or a
// name.
type Part struct {
	Present bool
	Default bool
	Name    string
}

// Named is the part naming name.
func Named(name string) Part { return Part{Present: true, Name: name} }

// DefaultPart is the <default> part.
func DefaultPart() Part { return Part{Present: true, Default: true} }

// Ptr is the part as the protocol carries it: nil for <default>.
func (p Part) Ptr() *string {
	if p.Default {
		return nil
	}
	s := p.Name
	return &s
}

// Entity is a quota entity: a user, a client id, or both; or, alone, an
// ip address (connection creation quotas).
type Entity struct {
	User, Client, IP Part
}

// String is the entity as ZooKeeper's path under /config names it
// ("users/alice/clients/app", "clients/<default>", "ips/10.0.0.1"),
// unsanitized.
func (e Entity) String() string {
	if e.IP.Present {
		return "ips/" + e.IP.label()
	}
	var b strings.Builder
	if e.User.Present {
		b.WriteString("users/" + e.User.label())
	}
	if e.Client.Present {
		if b.Len() > 0 {
			b.WriteString("/")
		}
		b.WriteString("clients/" + e.Client.label())
	}
	return b.String()
}

func (p Part) label() string {
	if p.Default {
		return DefaultName
	}
	return p.Name
}
