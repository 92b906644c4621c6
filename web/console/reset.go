package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// resetPlan is an offset reset worked out against the log, shown before
// (dry run) or after it is committed.
type resetPlan struct {
	Topic   string
	To      string
	Value   string
	DryRun  bool
	Applied bool
	Rows    []resetRow
}

type resetRow struct {
	Topic     string
	Partition int32
	Current   int64 // -1: nothing committed
	New       int64
	Err       string
}

// resetOffsets works out new committed offsets for the group (to the
// earliest or latest offset, a given offset, the first offset at a time,
// or shifted by N) and, unless it is a dry run, commits them. The group
// must have no members: Kafka refuses commits from outside an active
// group, and a running consumer would overwrite the reset.
func (c *Console) resetOffsets(w http.ResponseWriter, r *http.Request, k *kafka) error {
	name := r.PathValue("group")
	plan := &resetPlan{Topic: r.PostFormValue("topic"), To: r.PostFormValue("to"), Value: strings.TrimSpace(r.PostFormValue("value")), DryRun: r.PostFormValue("dryrun") != ""}
	d, err := describeGroup(k, name)
	if err != nil {
		return err
	}
	topics := d.Topics
	if plan.Topic != "" {
		topics = []string{plan.Topic}
	}
	if len(topics) == 0 {
		return badInput("The group has committed no offsets yet; name the topic to reset.")
	}
	details, err := k.adm.ListTopics(k.ctx, topics...)
	if err != nil {
		return err
	}
	if err := details.Error(); err != nil {
		return err
	}
	committed, err := k.adm.FetchOffsets(k.ctx, name)
	if err != nil {
		return err
	}
	starts, err := k.adm.ListStartOffsets(k.ctx, topics...)
	if err != nil {
		return err
	}
	ends, err := k.adm.ListEndOffsets(k.ctx, topics...)
	if err != nil {
		return err
	}
	var atTime kadm.ListedOffsets
	var number int64
	switch plan.To {
	case "earliest", "latest":
	case "offset", "shift":
		if number, err = strconv.ParseInt(plan.Value, 10, 64); err != nil || (plan.To == "offset" && number < 0) {
			return badInput(fmt.Sprintf("Reset %s needs a whole number, not %q.", plan.To, plan.Value))
		}
	case "timestamp":
		ts, err := parseTimestamp(plan.Value)
		if err != nil {
			return err
		}
		if atTime, err = k.adm.ListOffsetsAfterMilli(k.ctx, ts.UnixMilli(), topics...); err != nil {
			return err
		}
	default:
		return badInput(fmt.Sprintf("Reset to earliest, latest, an offset, a timestamp or a shift, not %q.", plan.To))
	}
	toCommit := kadm.Offsets{}
	for _, t := range details.Sorted() {
		for _, p := range t.Partitions.Numbers() {
			row := resetRow{Topic: t.Topic, Partition: p, Current: -1}
			if o, ok := committed.Lookup(t.Topic, p); ok && o.Err == nil && o.At >= 0 {
				row.Current = o.At
			}
			s, _ := starts.Lookup(t.Topic, p)
			e, _ := ends.Lookup(t.Topic, p)
			if s.Err != nil || e.Err != nil {
				row.Err = fmt.Sprint(firstErr(s.Err, e.Err))
				plan.Rows = append(plan.Rows, row)
				continue
			}
			switch plan.To {
			case "earliest":
				row.New = s.Offset
			case "latest":
				row.New = e.Offset
			case "offset":
				row.New = number
			case "shift":
				base := row.Current
				if base < 0 {
					base = e.Offset
				}
				row.New = base + number
			case "timestamp":
				a, _ := atTime.Lookup(t.Topic, p)
				row.New = a.Offset
			}
			// Clamp into the log, as kafka-consumer-groups.sh does.
			row.New = min(max(row.New, s.Offset), e.Offset)
			toCommit.AddOffset(t.Topic, p, row.New, -1)
			plan.Rows = append(plan.Rows, row)
		}
	}
	slices.SortFunc(plan.Rows, func(a, b resetRow) int {
		if c := cmpString(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	if !plan.DryRun {
		if groupIsActive(d.State) {
			return &pageError{Status: http.StatusConflict, Title: "The group is active",
				Detail: fmt.Sprintf("Group %q is %s with %d member(s). Stop its consumers first: Kafka accepts offset resets only for an empty group.", name, d.State, len(d.Members))}
		}
		resps, err := k.adm.CommitOffsets(k.ctx, name, toCommit)
		if err != nil {
			return err
		}
		if err := resps.Error(); err != nil {
			return err
		}
		plan.Applied = true
		if d, err = describeGroup(k, name); err != nil {
			return err
		}
	}
	d.Reset = plan
	c.render(w, r, http.StatusOK, "group", view{Title: "Group " + name, Nav: "groups", Data: d})
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
