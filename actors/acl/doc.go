// Package acl is samsa's authorizer: Kafka's ACL model (resource
// patterns, access control entries, bindings and the filters that
// describe and delete them) and Kafka's decision rules, with the
// persistence of the bindings behind a small Store interface.
//
// The decision core (State, in state.go and decide.go) is a plain value:
// an immutable index of the ACLs by resource, answered from without
// locks. Authorizer (authorizer.go) is the thin concurrent shell around
// it: it holds the current State behind an atomic pointer, so the gnet
// loops authorize requests without blocking, and serialises changes
// (CreateAcls, DeleteAcls, a change seen in ZooKeeper), each of which
// persists the resources it touches and then publishes a new State.
//
// Rules (Kafka's AclAuthorizer): a super user (super.users) may do
// anything; otherwise the ACLs that apply to a resource are those of its
// literal name, of the literal wildcard name "*", and of every PREFIXED
// pattern its name starts with. A matching DENY wins; else a matching
// ALLOW grants, where READ, WRITE, DELETE and ALTER imply DESCRIBE,
// ALTER_CONFIGS implies DESCRIBE_CONFIGS and ALL implies everything. A
// resource no ACL applies to is allowed only with
// allow.everyone.if.no.acl.found. An entry matches a principal when it
// names it or is "User:*", and a host when it names the client's IP or
// is "*".
package acl
