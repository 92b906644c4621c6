package metadata

import "github.com/samsa-io/samsa/actors/config"

// GroupConfig resolves one group config of group (its own value, else
// the broker default), as DescribeConfigs on the GROUP resource shows it;
// ok is false for a name that is no group config.
func (s *State) GroupConfig(group, name string) (string, bool) {
	e, ok := config.ResolveGroup(name, s.snap.Groups[group], s.Layers())
	return e.Value, ok
}

// GroupConfigs is every group's own configs (those set on it), by group.
// The maps are never changed (an alteration installs a new snapshot), so
// they may be published and read from any goroutine.
func (s *State) GroupConfigs() map[string]map[string]string { return s.snap.Groups }
