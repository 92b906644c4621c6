package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

type topicRow struct {
	Name              string
	Internal          bool
	Partitions        int
	ReplicationFactor int
	UnderReplicated   int
	Size              int64 // bytes on disk over all replicas; -1 unknown
	Records           int64 // end offsets minus start offsets
	Err               string
}

type topicsData struct {
	Topics       []topicRow
	ShowInternal bool
}

func (c *Console) topicsPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	showInternal := r.URL.Query().Get("internal") == "1"
	var details kadm.TopicDetails
	var err error
	if showInternal {
		details, err = k.adm.ListTopicsWithInternal(k.ctx)
	} else {
		details, err = k.adm.ListTopics(k.ctx)
	}
	if err != nil {
		return err
	}
	names := details.Names()
	sizes := topicSizes(k)
	starts, _ := k.adm.ListStartOffsets(k.ctx, names...)
	ends, _ := k.adm.ListEndOffsets(k.ctx, names...)
	d := topicsData{ShowInternal: showInternal}
	for _, t := range details.Sorted() {
		row := topicRow{Name: t.Topic, Internal: t.IsInternal, Partitions: len(t.Partitions), Size: -1}
		if t.Err != nil {
			row.Err = t.Err.Error()
		}
		if s, ok := sizes[t.Topic]; ok {
			row.Size = s
		}
		for _, p := range t.Partitions {
			row.ReplicationFactor = max(row.ReplicationFactor, len(p.Replicas))
			if len(p.ISR) < len(p.Replicas) {
				row.UnderReplicated++
			}
			if s, ok := starts.Lookup(t.Topic, p.Partition); ok && s.Err == nil {
				if e, ok := ends.Lookup(t.Topic, p.Partition); ok && e.Err == nil {
					row.Records += e.Offset - s.Offset
				}
			}
		}
		d.Topics = append(d.Topics, row)
	}
	c.render(w, r, http.StatusOK, "topics", view{Title: "Topics", Nav: "topics", Data: d})
	return nil
}

// topicSizes sums DescribeLogDirs over every broker and replica; topics
// the brokers do not describe are left out (size unknown).
func topicSizes(k *kafka) map[string]int64 {
	out := map[string]int64{}
	all, err := k.adm.DescribeAllLogDirs(k.ctx, nil) // every directory: a topic set must name partitions
	if err != nil {
		return out
	}
	for _, dirs := range all {
		for _, dir := range dirs {
			for t, ps := range dir.Topics {
				for _, p := range ps {
					out[t] += p.Size
				}
			}
		}
	}
	return out
}

type partitionRow struct {
	Partition       int32
	Leader          int32
	LeaderEpoch     int32
	Replicas        []int32
	ISR             []int32
	Offline         []int32
	Start, End      int64
	Size            int64
	UnderReplicated bool
	Err             string
}

type configRow struct {
	Key, Value, Source string
	Sensitive, Default bool
}

type topicData struct {
	Name       string
	ID         string
	Internal   bool
	Partitions []partitionRow
	Configs    []configRow
	Records    int64
	Size       int64
}

func (c *Console) topicPage(w http.ResponseWriter, r *http.Request, k *kafka) error {
	name := r.PathValue("topic")
	details, err := k.adm.ListTopicsWithInternal(k.ctx, name)
	if err != nil {
		return err
	}
	t, ok := details[name]
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
		return &pageError{Status: http.StatusNotFound, Title: "No such topic", Detail: fmt.Sprintf("The cluster has no topic %q.", name)}
	}
	if t.Err != nil {
		return t.Err
	}
	d := topicData{Name: name, ID: t.ID.String(), Internal: t.IsInternal}
	starts, _ := k.adm.ListStartOffsets(k.ctx, name)
	ends, _ := k.adm.ListEndOffsets(k.ctx, name)
	sizes := partitionSizes(k, name, t.Partitions.Numbers())
	for _, p := range t.Partitions.Sorted() {
		row := partitionRow{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas,
			ISR: p.ISR, Offline: p.OfflineReplicas, Start: -1, End: -1, Size: -1, UnderReplicated: len(p.ISR) < len(p.Replicas)}
		if p.Err != nil {
			row.Err = p.Err.Error()
		}
		if s, ok := starts.Lookup(name, p.Partition); ok && s.Err == nil {
			row.Start = s.Offset
		}
		if e, ok := ends.Lookup(name, p.Partition); ok && e.Err == nil {
			row.End = e.Offset
		}
		if row.Start >= 0 && row.End >= 0 {
			d.Records += row.End - row.Start
		}
		if s, ok := sizes[p.Partition]; ok {
			row.Size = s
			d.Size += s
		}
		d.Partitions = append(d.Partitions, row)
	}
	rcs, err := k.adm.DescribeTopicConfigs(k.ctx, name)
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return rc.Err
		}
		for _, cfg := range rc.Configs {
			row := configRow{Key: cfg.Key, Source: strings.TrimSuffix(strings.ToLower(cfg.Source.String()), "_config"), Sensitive: cfg.Sensitive}
			row.Default = cfg.Source.String() == "DEFAULT_CONFIG"
			if cfg.Value != nil && !cfg.Sensitive {
				row.Value = *cfg.Value
			}
			d.Configs = append(d.Configs, row)
		}
	}
	c.render(w, r, http.StatusOK, "topic", view{Title: "Topic " + name, Nav: "topics", Data: d})
	return nil
}

// partitionSizes is the size of each partition of topic: the largest
// replica's, so a lagging follower does not hide data.
func partitionSizes(k *kafka, topic string, partitions []int32) map[int32]int64 {
	out := map[int32]int64{}
	var set kadm.TopicsSet
	set.Add(topic, partitions...)
	all, err := k.adm.DescribeAllLogDirs(k.ctx, set)
	if err != nil {
		return out
	}
	for _, dirs := range all {
		for _, dir := range dirs {
			for _, p := range dir.Topics[topic] {
				out[p.Partition] = max(out[p.Partition], p.Size)
			}
		}
	}
	return out
}

// createTopic creates the topic the form describes; a blank partition
// count or replication factor takes the broker's default (-1).
func (c *Console) createTopic(w http.ResponseWriter, r *http.Request, k *kafka) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		return badInput("A topic needs a name.")
	}
	partitions, err := optionalInt(r.PostFormValue("partitions"), "partitions")
	if err != nil {
		return err
	}
	rf, err := optionalInt(r.PostFormValue("replication"), "replication factor")
	if err != nil {
		return err
	}
	configs, err := parseConfigLines(r.PostFormValue("configs"))
	if err != nil {
		return err
	}
	resp, err := k.adm.CreateTopic(k.ctx, int32(partitions), int16(rf), configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return err
	}
	redirect(w, r, "/topics/"+pathEscape(name), "Topic "+name+" created.")
	return nil
}

func (c *Console) deleteTopic(w http.ResponseWriter, r *http.Request, k *kafka) error {
	name := r.PathValue("topic")
	if r.PostFormValue("confirm") != name {
		return badInput(fmt.Sprintf("To delete topic %q, type its name into the confirmation field.", name))
	}
	resp, err := k.adm.DeleteTopic(k.ctx, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return err
	}
	redirect(w, r, "/topics", "Topic "+name+" deleted.")
	return nil
}

// alterTopicConfigs sets the key=value lines of the form and deletes the
// keys it lists (back to their defaults), in one IncrementalAlterConfigs.
func (c *Console) alterTopicConfigs(w http.ResponseWriter, r *http.Request, k *kafka) error {
	name := r.PathValue("topic")
	set, err := parseConfigLines(r.PostFormValue("set"))
	if err != nil {
		return err
	}
	var alters []kadm.AlterConfig
	for key, v := range set {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: v})
	}
	for _, key := range strings.Fields(strings.ReplaceAll(r.PostFormValue("delete"), ",", " ")) {
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key})
	}
	if len(alters) == 0 {
		return badInput("Nothing to change: write key=value lines to set, or keys to reset to their defaults.")
	}
	resps, err := k.adm.AlterTopicConfigs(k.ctx, alters, name)
	if err != nil {
		return err
	}
	for _, resp := range resps {
		if resp.Err != nil {
			if resp.ErrMessage != "" {
				return fmt.Errorf("%w (%s)", resp.Err, resp.ErrMessage)
			}
			return resp.Err
		}
	}
	redirect(w, r, "/topics/"+pathEscape(name), fmt.Sprintf("%d config change(s) applied to %s.", len(alters), name))
	return nil
}

// parseConfigLines reads "key=value" lines (blank lines and # comments
// skipped).
func parseConfigLines(text string) (map[string]*string, error) {
	out := map[string]*string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, badInput(fmt.Sprintf("Line %d, %q, is not key=value.", i+1, line))
		}
		v := strings.TrimSpace(value)
		out[key] = &v
	}
	return out, nil
}

// optionalInt parses a form number; blank is -1 (the broker's default).
func optionalInt(s, what string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 1 || n > 32767 {
		return 0, badInput(fmt.Sprintf("The %s must be a whole number from 1 to 32767 (or blank for the broker's default), not %q.", what, s))
	}
	return n, nil
}
