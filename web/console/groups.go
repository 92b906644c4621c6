package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

type groupRow struct {
	Name, State, ProtocolType, Protocol string
	Members                             int
	Lag                                 int64 // total; -1 unknown
	Coordinator                         int32
	Err                                 string
}

// groupsPage lists every group with its total lag (kadm.Lag describes
// the groups and fetches their commits and end offsets).
func (c *Console) groupsPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	listed, err := k.adm.ListGroups(k.ctx)
	if err != nil {
		return err
	}
	lags, lagErr := k.adm.Lag(k.ctx, listed.Groups()...)
	var rows []groupRow
	for _, g := range listed.Sorted() {
		row := groupRow{Name: g.Group, State: g.State, ProtocolType: g.ProtocolType, Coordinator: g.Coordinator, Lag: -1}
		if l, ok := lags[g.Group]; ok && lagErr == nil {
			row.State, row.Protocol, row.Members = l.State, l.Protocol, len(l.Members)
			if err := l.Error(); err != nil {
				row.Err = err.Error()
			} else {
				row.Lag = l.Lag.Total()
			}
		} else if lagErr != nil {
			row.Err = lagErr.Error()
		}
		rows = append(rows, row)
	}
	c.render(w, r, http.StatusOK, "groups", view{Title: "Consumer groups", Nav: "groups", Data: rows})
	return nil
}

type memberRow struct {
	ID, InstanceID, ClientID, Host string
	Assigned                       []string // topic: partitions
}

type lagRow struct {
	Topic     string
	Partition int32
	Member    string
	Committed int64 // -1: nothing committed
	End       int64
	Lag       int64 // -1 unknown
	Err       string
}

type groupData struct {
	Name, State, ProtocolType, Protocol string
	Coordinator                         int32
	Members                             []memberRow
	Lag                                 []lagRow
	TotalLag                            int64
	Topics                              []string // topics with commits, for the reset form
	Reset                               *resetPlan
}

// describeGroup gathers a group's members and lag per partition.
func describeGroup(k *kafka, name string) (*groupData, error) {
	lags, err := k.adm.Lag(k.ctx, name)
	if err != nil {
		return nil, err
	}
	l, ok := lags[name]
	if !ok {
		return nil, &pageError{Status: http.StatusNotFound, Title: "No such group", Detail: fmt.Sprintf("The cluster has no consumer group %q.", name)}
	}
	if err := l.Error(); err != nil {
		return nil, err
	}
	if l.State == "Dead" && len(l.Lag) == 0 {
		return nil, &pageError{Status: http.StatusNotFound, Title: "No such group", Detail: fmt.Sprintf("The cluster has no consumer group %q.", name)}
	}
	d := &groupData{Name: name, State: l.State, ProtocolType: l.ProtocolType, Protocol: l.Protocol, Coordinator: l.Coordinator.NodeID}
	for _, m := range l.Members {
		row := memberRow{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
		if m.InstanceID != nil {
			row.InstanceID = *m.InstanceID
		}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				ps := slices.Clone(t.Partitions)
				slices.Sort(ps)
				row.Assigned = append(row.Assigned, t.Topic+": "+joinInt32(ps))
			}
		}
		d.Members = append(d.Members, row)
	}
	for _, ml := range l.Lag.Sorted() {
		row := lagRow{Topic: ml.Topic, Partition: ml.Partition, Committed: ml.Commit.At, End: ml.End.Offset, Lag: ml.Lag}
		if ml.Member != nil {
			row.Member = ml.Member.ClientID + " " + ml.Member.MemberID
		}
		if ml.Err != nil {
			row.Err = ml.Err.Error()
		} else if ml.Lag > 0 {
			d.TotalLag += ml.Lag
		}
		d.Lag = append(d.Lag, row)
		if !slices.Contains(d.Topics, ml.Topic) {
			d.Topics = append(d.Topics, ml.Topic)
		}
	}
	return d, nil
}

func (c *Console) groupPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	d, err := describeGroup(k, r.PathValue("group"))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "group", view{Title: "Group " + d.Name, Nav: "groups", Data: d})
	return nil
}

// groupLagFragment is the lag table alone, which the group page reloads
// every few seconds through htmx.
func (c *Console) groupLagFragment(w http.ResponseWriter, r *http.Request, k *kafka) error {
	d, err := describeGroup(k, r.PathValue("group"))
	if err != nil {
		return err
	}
	r.Header.Set("HX-Request", "true")
	r.Header.Set("HX-Target", "lag")
	c.render(w, r, http.StatusOK, "group", view{Data: d})
	return nil
}

// groupIsActive reports whether members are in the group: Kafka refuses
// an offset commit from outside an active group, and a reset under a
// running consumer would be overwritten by its next commit anyway.
func groupIsActive(state string) bool {
	return !strings.EqualFold(state, "Empty") && !strings.EqualFold(state, "Dead") && state != ""
}
