package quota

import (
	"math"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/actors/sasl"
)

// In a cluster the quotas live where Kafka 3.9's ZooKeeper mode keeps
// them, one znode an entity, {"version":1,"config":{...}}:
//
//	/config/users/<user>                    user (the SCRAM credentials share it)
//	/config/users/<user>/clients/<client>   user and client id
//	/config/clients/<client>                client id
//	/config/ips/<ip>                        ip (connection_creation_rate)
//
// Names are sanitized as Kafka's Sanitizer does (URL-encoded), a
// <default> part is written "<default>". Values are strings: whole
// numbers for the LONG and INT keys ("1024"), Java's Double.toString for
// the DOUBLE ones ("12.5", "200.0"). Every write is followed by a change
// notification naming the entity ("users/alice/clients/app"), which
// every broker's config watch follows (actors/catalog).

// ZooKeeper's config entity types of quota entities.
const (
	ZKUsers   = "users"
	ZKClients = "clients"
	ZKIPs     = "ips"
)

// EntityStore is what the ZooKeeper persistence needs: Kafka's dynamic
// config entities (zkmeta's config store).
type EntityStore = sasl.EntityStore

// ZKPath is where e's configs live: /config/<entityType>/<name>.
func (e Entity) ZKPath() (entityType, name string) {
	switch {
	case e.IP.Present:
		return ZKIPs, e.IP.sanitized()
	case e.User.Present && e.Client.Present:
		return ZKUsers, e.User.sanitized() + "/clients/" + e.Client.sanitized()
	case e.User.Present:
		return ZKUsers, e.User.sanitized()
	}
	return ZKClients, e.Client.sanitized()
}

func (p Part) sanitized() string {
	if p.Default {
		return DefaultName
	}
	return sasl.SanitizeUser(p.Name)
}

func desanitized(name string) Part {
	if name == DefaultName {
		return DefaultPart()
	}
	return Named(sasl.DesanitizeUser(name))
}

// EntityAt is the entity whose configs live at /config/<entityType>/<name>
// (a change notification's entity); ok is false for paths of no quota
// entity (topics, brokers, malformed names).
func EntityAt(entityType, name string) (e Entity, ok bool) {
	parts := strings.Split(name, "/")
	if parts[0] == "" {
		return e, false
	}
	switch {
	case entityType == ZKUsers && len(parts) == 1:
		e.User = desanitized(parts[0])
	case entityType == ZKUsers && len(parts) == 3 && parts[1] == "clients" && parts[2] != "":
		e.User, e.Client = desanitized(parts[0]), desanitized(parts[2])
	case entityType == ZKClients && len(parts) == 1:
		e.Client = desanitized(parts[0])
	case entityType == ZKIPs && len(parts) == 1:
		e.IP = desanitized(parts[0])
	default:
		return e, false
	}
	return e, true
}

// QuotasOf picks e's quotas out of its znode's configs (which may hold
// other keys: SCRAM credentials); a value that is not a number is
// skipped and reported in bad.
func QuotasOf(e Entity, configs map[string]string) (quotas map[string]float64, bad []string) {
	quotas = map[string]float64{}
	for _, k := range KeysOf(e) {
		text, ok := configs[k]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || checkValue(k, v) != "" {
			bad = append(bad, k)
			continue
		}
		quotas[k] = v
	}
	return quotas, bad
}

// ZooKeeperPersist writes each changed entity's quotas into its znode,
// keeping the znode's other configs (a user's SCRAM credentials), and
// announces the change, as Kafka's AdminZkClient.changeConfigs does. An
// entity left without quotas keeps its znode, with an empty config, as
// in Kafka.
func ZooKeeperPersist(zk EntityStore) Persist {
	return func(changed []Entity, all Configs) error {
		for _, e := range changed {
			values := map[string]string{}
			for k, v := range all[e] {
				values[k] = formatValue(k, v)
			}
			typ, name := e.ZKPath()
			if err := sasl.UpdateEntity(zk, typ, name, KeysOf(e), values); err != nil {
				return err
			}
		}
		return nil
	}
}

// ZooKeeperRead reads one entity's quotas from its znode: a cluster's
// Alter starts from them, not from what this broker last heard, since
// another broker may have changed them since.
func ZooKeeperRead(zk EntityStore) func(Entity) (map[string]float64, error) {
	return func(e Entity) (map[string]float64, error) {
		typ, name := e.ZKPath()
		cfg, err := zk.EntityConfig(typ, name)
		if err != nil {
			return nil, err
		}
		q, _ := QuotasOf(e, cfg)
		return q, nil
	}
}

// formatValue is a quota as Kafka writes it into ZooKeeper: a whole
// number for LONG and INT keys, Java's Double.toString otherwise.
func formatValue(key string, v float64) string {
	if isWhole(key) {
		return strconv.FormatInt(int64(v), 10)
	}
	return javaDouble(v)
}

// javaDouble is Java's Double.toString for the finite, non-negative
// values quotas hold: plain decimals with at least one fractional digit
// from 10^-3 to 10^7 ("200.0", "0.5"), computerized scientific notation
// beyond ("1.0E7", "1.5E-4").
func javaDouble(v float64) string {
	if v == 0 || (math.Abs(v) >= 1e-3 && math.Abs(v) < 1e7) {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64) // "1.5E-04", "1E+07"
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-0")
	if neg {
		exp = "-" + exp
	}
	return mant + "E" + exp
}

// Lister is EntityStore with the listing of /config/<type>'s children.
type Lister interface {
	EntityStore
	EntitiesWithConfig(entityType string) ([]string, error)
}

// ZooKeeperReadAll reads every quota entity's quotas from ZooKeeper, as
// Kafka's DescribeClientQuotas does in ZooKeeper mode: a description
// through any broker shows a change made through another at once.
func ZooKeeperReadAll(zk Lister) func() (Configs, error) {
	// A directory to list: its children are entities of typ named
	// prefix+child.
	type dir struct{ path, typ, prefix string }
	return func() (Configs, error) {
		out := Configs{}
		todo := []dir{{ZKClients, ZKClients, ""}, {ZKIPs, ZKIPs, ""}, {ZKUsers, ZKUsers, ""}}
		for len(todo) > 0 {
			d := todo[0]
			todo = todo[1:]
			children, err := zk.EntitiesWithConfig(d.path)
			if err != nil {
				return nil, err
			}
			for _, c := range children {
				name := d.prefix + c
				if d.path == ZKUsers { // each user's clients too
					todo = append(todo, dir{ZKUsers + "/" + c + "/clients", ZKUsers, c + "/clients/"})
				}
				e, ok := EntityAt(d.typ, name)
				if !ok {
					continue
				}
				cfg, err := zk.EntityConfig(d.typ, name)
				if err != nil {
					return nil, err
				}
				if q, _ := QuotasOf(e, cfg); len(q) > 0 {
					out[e] = q
				}
			}
		}
		return out, nil
	}
}
