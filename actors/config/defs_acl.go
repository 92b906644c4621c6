package config

import (
	"fmt"
	"slices"
	"strings"
)

// Authorizer config keys.
const (
	KeyAuthorizerClass  = "authorizer.class.name"
	KeySuperUsers       = "super.users"
	KeyAllowEveryoneACL = "allow.everyone.if.no.acl.found"
)

// authorizerClasses are the authorizer.class.name values that turn on
// samsa's authorizer: the class names a Kafka operator's
// server.properties carries (ZooKeeper mode's AclAuthorizer and its
// older name, KRaft's StandardAuthorizer). All mean Kafka's ACL rules.
var authorizerClasses = []string{
	"kafka.security.authorizer.AclAuthorizer",
	"kafka.security.auth.SimpleAclAuthorizer",
	"org.apache.kafka.metadata.authorizer.StandardAuthorizer",
}

// AuthorizerEnabled reports whether authorizer.class.name turns the
// authorizer on (validated at load: any other non-empty value is
// refused).
func AuthorizerEnabled(b *Broker) bool { return strings.TrimSpace(b.Value(KeyAuthorizerClass)) != "" }

// SuperUsers parses super.users ("User:admin;User:bob").
func SuperUsers(b *Broker) map[string]bool {
	out := make(map[string]bool)
	for _, p := range strings.Split(b.Value(KeySuperUsers), ";") {
		if p = strings.TrimSpace(p); p != "" {
			out[p] = true
		}
	}
	return out
}

func checkAuthorizerClass(v string) error {
	v = strings.TrimSpace(v)
	if v == "" || slices.Contains(authorizerClasses, v) {
		return nil
	}
	return fmt.Errorf("samsa has its own authorizer, with Kafka's ACL rules; set one of %s to turn it on, or leave it empty for none",
		strings.Join(authorizerClasses, ", "))
}

func checkSuperUsers(v string) error {
	for _, p := range strings.Split(v, ";") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if typ, name, ok := strings.Cut(p, ":"); !ok || typ == "" || name == "" {
			return fmt.Errorf("%q is not a principal: write Type:name, such as User:admin, separated by semicolons", p)
		}
	}
	return nil
}

// aclDefs are the authorizer's broker configs.
var aclDefs = []Def{
	{Name: KeyAuthorizerClass, Type: String, Default: "", Check: checkAuthorizerClass,
		Doc: "Turns on authorization by ACLs (Kafka's rules; ACLs are managed with kafka-acls.sh or any admin client). Empty: no authorization."},
	{Name: KeySuperUsers, Type: String, Nullable: true, Check: checkSuperUsers,
		Doc: "Principals allowed every operation whatever the ACLs say, separated by semicolons: User:admin;User:bob."},
	{Name: KeyAllowEveryoneACL, Type: Boolean, Default: "false",
		Doc: "With an authorizer: allow every operation on a resource no ACL applies to."},
}
