package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzACLRequests decodes arbitrary bytes as each ACL request, at each
// version, and converts what decodes into bindings and filters and
// validates them: malformed resource types, operations, patterns and
// principals must come back as errors, never a panic.
func FuzzACLRequests(f *testing.F) {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.Principal, c.Host, c.Operation, c.PermissionType = 2, "t", "User:a", "*", 3, 3
	create := kmsg.NewPtrCreateACLsRequest()
	create.Version, create.Creations = 3, []kmsg.CreateACLsRequestCreation{c}
	f.Add(int16(3), create.AppendTo(nil))
	f.Add(int16(1), []byte{0, 0, 0, 1, 9, 0, 1, 'x', 77, 0, 0, 0, 0, 200, 1})
	f.Fuzz(func(t *testing.T, version int16, data []byte) {
		version = min(max(version, 0), 3)
		cr := kmsg.NewPtrCreateACLsRequest()
		cr.Version = version
		if cr.ReadFrom(data) == nil {
			for i := range cr.Creations {
				b := creationBinding(version, &cr.Creations[i])
				_ = b.Validate()
			}
		}
		dr := kmsg.NewPtrDescribeACLsRequest()
		dr.Version = version
		if dr.ReadFrom(data) == nil {
			filter := describeFilter(dr)
			if filter.Validate() == nil {
				_ = describedResources(nil)
			}
		}
		del := kmsg.NewPtrDeleteACLsRequest()
		del.Version = version
		if del.ReadFrom(data) == nil {
			for i := range del.Filters {
				_ = deleteFilter(version, &del.Filters[i]).Validate()
			}
		}
	})
}
