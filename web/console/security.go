package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type aclRow struct {
	Principal, Host, Operation, Permission string
	ResourceType, Resource, Pattern        string
}

type quotaRow struct {
	Entity string
	Values []string
}

type securityData struct {
	ACLs      []aclRow
	ACLsOff   string // why ACLs cannot be listed
	Quotas    []quotaRow
	QuotasErr string
}

// securityPage lists every ACL (DescribeAcls with any-filters) and every
// client quota (DescribeClientQuotas, not strict, no components).
func (c *Console) securityPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	var d securityData
	acls := kmsg.NewPtrDescribeACLsRequest()
	acls.ResourceType, acls.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	acls.Operation, acls.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := acls.RequestWith(k.ctx, k.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		d.ACLsOff = "ACLs are off: the broker has no authorizer (authorizer.class.name)."
	case err != nil:
		d.ACLsOff = err.Error()
	default:
		for _, res := range resp.Resources {
			for _, a := range res.ACLs {
				d.ACLs = append(d.ACLs, aclRow{Principal: a.Principal, Host: a.Host, Operation: a.Operation.String(),
					Permission: a.PermissionType.String(), ResourceType: res.ResourceType.String(), Resource: res.ResourceName,
					Pattern: res.ResourcePatternType.String()})
			}
		}
	}
	quotas := kmsg.NewPtrDescribeClientQuotasRequest()
	qresp, err := quotas.RequestWith(k.ctx, k.cl)
	if err == nil {
		err = kerr.ErrorForCode(qresp.ErrorCode)
	}
	if err != nil {
		d.QuotasErr = err.Error()
	} else {
		for _, e := range qresp.Entries {
			var entity []string
			for _, ec := range e.Entity {
				name := "<default>"
				if ec.Name != nil {
					name = *ec.Name
				}
				entity = append(entity, ec.Type+"="+name)
			}
			row := quotaRow{Entity: strings.Join(entity, ", ")}
			for _, v := range e.Values {
				row.Values = append(row.Values, fmt.Sprintf("%s=%g", v.Key, v.Value))
			}
			d.Quotas = append(d.Quotas, row)
		}
		slices.SortFunc(d.Quotas, func(a, b quotaRow) int { return cmpString(a.Entity, b.Entity) })
	}
	c.render(w, r, http.StatusOK, "security", view{Title: "Security", Nav: "security", Data: d})
	return nil
}
