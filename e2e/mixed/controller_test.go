package mixed

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-io/samsa/testkit"
)

// controllerKind is the kind of the broker /controller names, or an
// error when there is none.
func controllerOf(c *testkit.Cluster) (*testkit.ClusterBroker, error) {
	id, err := c.Controller()
	if err != nil {
		return nil, err
	}
	if b := c.BrokerByID(id); b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("no controller (/controller names %d)", id)
}

// moveControllerTo makes a broker of kind the controller: when
// /controller names another kind, it cuts the brokers of the other kind
// off from ZooKeeper for a moment (well within the session timeout, so
// their sessions live on), deletes /controller as an operator forcing an
// election does, waits until a broker of kind has won, and lets the
// others back. It returns the controller.
func moveControllerTo(t *testing.T, c *testkit.Cluster, kind testkit.ClusterKind) *testkit.ClusterBroker {
	t.Helper()
	var b *testkit.ClusterBroker
	eventually(t, time.Minute, "a controller", func() (err error) {
		b, err = controllerOf(c)
		return err
	})
	if b.Kind() == kind {
		t.Logf("controller: broker %d (%s)", b.ID(), kind)
		return b
	}
	for _, o := range c.Brokers() {
		if o.Kind() != kind {
			o.CutZooKeeper()
			defer o.HealZooKeeper()
		}
	}
	err := c.ZooKeeperConn().Delete(c.ZKPath("/controller"), -1)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("deleting /controller: %v", err)
	}
	eventually(t, sessionTimeout/2, "a "+kind.String()+" controller", func() (err error) {
		b, err = controllerOf(c)
		if err == nil && b.Kind() != kind {
			err = errorf("broker %d (%s) is controller", b.ID(), b.Kind())
		}
		return err
	})
	t.Logf("controller moved to broker %d (%s)", b.ID(), kind)
	return b
}
