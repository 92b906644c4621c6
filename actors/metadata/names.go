package metadata

import (
	"fmt"
	"strings"
)

// MaxTopicNameLen is the longest topic name: the partition directory name
// (name-partition plus a deletion suffix) must fit in 255 bytes.
const MaxTopicNameLen = 249

// ValidateTopicName applies Kafka's rules: 1 to 249 characters of
// [a-zA-Z0-9._-], and not "." or "..".
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be %q", name)
	case len(name) > MaxTopicNameLen:
		return fmt.Errorf("topic name is %d characters long; the limit is %d", len(name), MaxTopicNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !legalTopicNameChar(c) {
			return fmt.Errorf("topic name %q contains %q; use only ASCII letters, digits, '.', '_' and '-'", name, c)
		}
	}
	return nil
}

// collisionKey maps names that would share metric names ("a.b" and "a_b")
// to the same key.
func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

// collision returns an existing or deleting topic whose name differs from
// name but collides with it.
func (s *State) collision(name string) (string, bool) {
	key := collisionKey(name)
	if !strings.ContainsAny(name, "._") {
		return "", false
	}
	for other := range s.byName {
		if other != name && collisionKey(other) == key {
			return other, true
		}
	}
	for other := range s.deleting {
		if other != name && collisionKey(other) == key {
			return other, true
		}
	}
	return "", false
}

// IsInternalTopic reports whether name is one of Kafka's own internal
// topics (the group and transaction coordinators' logs), which Metadata
// marks internal whoever created them, so admin tools hide them.
func IsInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// legalTopicNameChar reports whether c may appear in a topic name: an ASCII
// letter or digit, '.', '_' or '-'.
func legalTopicNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
