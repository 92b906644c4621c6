package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
)

// The ACL APIs' fields are Kafka's codes, which acl's types share; only
// version 0, which has no pattern type, needs a rule: its bindings and
// filters are LITERAL.

func patternOf(version int16, p kmsg.ACLResourcePatternType) acl.PatternType {
	if version < 1 {
		return acl.PatternLiteral
	}
	return acl.PatternType(p)
}

// creationBinding is the binding a CreateAcls creation asks for.
func creationBinding(version int16, c *kmsg.CreateACLsRequestCreation) acl.Binding {
	return acl.Binding{
		Resource: acl.Resource{Type: acl.ResourceType(c.ResourceType), Name: c.ResourceName, Pattern: patternOf(version, c.ResourcePatternType)},
		Entry:    acl.Entry{Principal: c.Principal, Host: c.Host, Op: acl.Operation(c.Operation), Perm: acl.Permission(c.PermissionType)},
	}
}

// describeFilter is the filter of a DescribeAcls request.
func describeFilter(r *kmsg.DescribeACLsRequest) acl.Filter {
	return acl.Filter{Type: acl.ResourceType(r.ResourceType), Name: r.ResourceName, Pattern: patternOf(r.Version, r.ResourcePatternType),
		Principal: r.Principal, Host: r.Host, Op: acl.Operation(r.Operation), Perm: acl.Permission(r.PermissionType)}
}

// deleteFilter is one filter of a DeleteAcls request.
func deleteFilter(version int16, f *kmsg.DeleteACLsRequestFilter) acl.Filter {
	return acl.Filter{Type: acl.ResourceType(f.ResourceType), Name: f.ResourceName, Pattern: patternOf(version, f.ResourcePatternType),
		Principal: f.Principal, Host: f.Host, Op: acl.Operation(f.Operation), Perm: acl.Permission(f.PermissionType)}
}

// describedResources groups bindings by resource for DescribeAcls'
// answer (bindings come sorted by resource).
func describedResources(bs []acl.Binding) []kmsg.DescribeACLsResponseResource {
	var out []kmsg.DescribeACLsResponseResource
	for _, b := range bs {
		if n := len(out); n == 0 || out[n-1].ResourceName != b.Resource.Name ||
			out[n-1].ResourceType != kmsg.ACLResourceType(b.Resource.Type) ||
			out[n-1].ResourcePatternType != kmsg.ACLResourcePatternType(b.Resource.Pattern) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name, kmsg.ACLResourcePatternType(b.Resource.Pattern)
			out = append(out, r)
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Entry.Principal, b.Entry.Host, kmsg.ACLOperation(b.Entry.Op), kmsg.ACLPermissionType(b.Entry.Perm)
		out[len(out)-1].ACLs = append(out[len(out)-1].ACLs, a)
	}
	return out
}

// matchingACL is a deleted binding in DeleteAcls' answer.
func matchingACL(b acl.Binding) kmsg.DeleteACLsResponseResultMatchingACL {
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name, kmsg.ACLResourcePatternType(b.Resource.Pattern)
	m.Principal, m.Host, m.Operation, m.PermissionType = b.Entry.Principal, b.Entry.Host, kmsg.ACLOperation(b.Entry.Op), kmsg.ACLPermissionType(b.Entry.Perm)
	return m
}
