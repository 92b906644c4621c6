package quota

import (
	"maps"
	"math"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// PlanAlter checks an AlterClientQuotas request against configs and
// returns the configs it leads to, the entities it changes (none when it
// is validate_only or changes nothing) and the response. Each entry is
// checked alone, as Kafka does: a bad entry fails with INVALID_REQUEST
// and leaves the others be.
func PlanAlter(configs Configs, req *kmsg.AlterClientQuotasRequest) (Configs, []Entity, *kmsg.AlterClientQuotasResponse) {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	resp.Version = req.Version
	next := maps.Clone(configs)
	var changed []Entity
	for _, en := range req.Entries {
		out := ResponseEntry(en)
		e, cfg, msg := applyEntry(next, en)
		if msg != "" {
			out.ErrorCode, out.ErrorMessage = kerr.InvalidRequest.Int16(), kmsg.StringPtr(msg)
		} else if !req.ValidateOnly {
			if len(cfg) == 0 {
				delete(next, e)
			} else {
				next[e] = cfg
			}
			changed = append(changed, e)
		}
		resp.Entries = append(resp.Entries, out)
	}
	return next, changed, resp
}

// applyEntry returns entry's entity and its configs once entry's
// operations are applied, or why the entry is refused.
func applyEntry(configs Configs, en kmsg.AlterClientQuotasRequestEntry) (Entity, map[string]float64, string) {
	e, msg := entityOf(en.Entity)
	if msg != "" {
		return e, nil, msg
	}
	cfg := map[string]float64{}
	for k, v := range configs[e] {
		cfg[k] = v
	}
	seen := map[string]bool{}
	for _, op := range en.Ops {
		if seen[op.Key] {
			return e, nil, "Duplicate quota key " + op.Key + " for entity " + e.String()
		}
		seen[op.Key] = true
		if !slices.Contains(KeysOf(e), op.Key) {
			return e, nil, "Invalid configuration key " + op.Key
		}
		if op.Remove {
			delete(cfg, op.Key)
			continue
		}
		if msg := checkValue(op.Key, op.Value); msg != "" {
			return e, nil, msg
		}
		cfg[op.Key] = op.Value
	}
	return e, cfg, ""
}

// checkValue refuses values Kafka refuses: byte rates are whole numbers
// (Kafka's LONG configs), and no quota is negative or not a number.
func checkValue(key string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return "Invalid value " + strconv.FormatFloat(v, 'g', -1, 64) + " for configuration key " + key
	}
	if !isWhole(key) {
		return ""
	}
	if key == KeyConnectionCreationRate && (v != math.Trunc(v) || v > math.MaxInt32) {
		return "Configuration " + key + " must be a INT value"
	}
	if v != math.Trunc(v) || v > math.MaxInt64 {
		return "Configuration " + key + " must be a LONG value"
	}
	return ""
}

// entityOf reads a request's entity: user and/or client-id, or an ip
// alone, each at most once, a nil name being <default>. An ip is an
// address (Kafka also takes a host name it can resolve; samsa does not
// resolve names on the request path).
func entityOf(cs []kmsg.AlterClientQuotasRequestEntryEntity) (Entity, string) {
	var e Entity
	if len(cs) == 0 {
		return e, "Invalid empty client quota entity"
	}
	for _, c := range cs {
		p := DefaultPart()
		if c.Name != nil {
			if *c.Name == "" {
				return e, "Empty " + c.Type + " not supported"
			}
			p = Named(*c.Name)
		}
		var slot *Part
		switch c.Type {
		case TypeUser:
			slot = &e.User
		case TypeClientID:
			slot = &e.Client
		case TypeIP:
			if c.Name != nil && net.ParseIP(*c.Name) == nil {
				return e, *c.Name + " is not a valid IP or resolvable host."
			}
			slot = &e.IP
		default:
			return e, "Unhandled client quota entity type: " + c.Type
		}
		if slot.Present {
			return e, "Duplicate quota entity type " + c.Type
		}
		*slot = p
	}
	if e.IP.Present && (e.User.Present || e.Client.Present) {
		return e, "Invalid quota entity combination, IP entity should not be used with user/client ID entity."
	}
	return e, ""
}

// ResponseEntry is the answer to entry, naming its entity as asked, with
// no error yet.
func ResponseEntry(en kmsg.AlterClientQuotasRequestEntry) kmsg.AlterClientQuotasResponseEntry {
	out := kmsg.NewAlterClientQuotasResponseEntry()
	for _, c := range en.Entity {
		oc := kmsg.NewAlterClientQuotasResponseEntryEntity()
		oc.Type, oc.Name = c.Type, c.Name
		out.Entity = append(out.Entity, oc)
	}
	return out
}
