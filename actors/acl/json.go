package acl

import (
	"encoding/json"
	"errors"
)

// aclJSON is one entry as Kafka writes it in ZooKeeper (AclEntry's JSON):
// {"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}.
type aclJSON struct {
	Principal      string `json:"principal"`
	PermissionType string `json:"permissionType"`
	Host           string `json:"host"`
	Operation      string `json:"operation"`
}

func toACLJSON(e Entry) aclJSON {
	return aclJSON{Principal: e.Principal, PermissionType: e.Perm.String(), Operation: e.Op.String(), Host: e.Host}
}

func (a aclJSON) entry() (Entry, error) {
	op, okOp := ParseOperation(a.Operation)
	perm, okPerm := ParsePermission(a.PermissionType)
	if !okOp || !okPerm || a.Principal == "" || a.Host == "" {
		return Entry{}, errors.New("acl: bad entry")
	}
	return Entry{Principal: a.Principal, Host: a.Host, Op: op, Perm: perm}, nil
}

// aclsJSON is a resource's znode: {"acls":[...],"version":1}. The key
// orders are those Kafka 3.9.1 writes (its JSON comes from hash maps;
// checked against a live broker by e2e/security), so a znode samsa
// writes is byte for byte Kafka's for a resource with one entry; with
// more, Kafka's entry order is its set's and may differ.
type aclsJSON struct {
	ACLs    []aclJSON `json:"acls"`
	Version int       `json:"version"`
}

// EncodeEntries is a resource's entries as Kafka's znode JSON.
func EncodeEntries(es []Entry) []byte {
	doc := aclsJSON{Version: 1, ACLs: make([]aclJSON, len(es))}
	for i, e := range es {
		doc.ACLs[i] = toACLJSON(e)
	}
	b, _ := json.Marshal(doc) // plain strings: cannot fail
	return b
}

// DecodeEntries reads a resource's znode JSON; empty data is no entries.
func DecodeEntries(b []byte) ([]Entry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var doc aclsJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	es := make([]Entry, 0, len(doc.ACLs))
	for _, a := range doc.ACLs {
		e, err := a.entry()
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}
