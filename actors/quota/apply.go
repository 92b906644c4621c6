package quota

import "github.com/twmb/franz-go/pkg/kmsg"

// Alter applies an AlterClientQuotas request: the configs it leads to are
// persisted first and then enforced, so an answered change survives a
// restart. It may block (the file write): call it off the gnet loop. On
// a persistence error nothing changes and the error is returned with the
// response, whose entries the caller fails.
func (m *Manager) Alter(req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error) {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	next, changed, resp := PlanAlter(m.Snapshot(), req)
	if len(changed) == 0 {
		return resp, nil
	}
	if m.persist != nil {
		if err := m.persist(changed, next); err != nil {
			return resp, err
		}
	}
	m.install(next)
	return resp, nil
}

// Replace sets one entity's configs (empty: none) as a config watch read
// them, without persisting them.
func (m *Manager) Replace(e Entity, cfg map[string]float64) {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	next := Configs{}
	for k, v := range m.Snapshot() {
		next[k] = v
	}
	if len(cfg) == 0 {
		delete(next, e)
	} else {
		next[e] = cfg
	}
	m.install(next)
}
