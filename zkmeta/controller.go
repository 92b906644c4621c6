package zkmeta

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Controller is /controller: which broker is the controller, since when.
type Controller struct {
	BrokerID  int32
	Timestamp int64 // ms
	// KRaftControllerEpoch is -1 for a ZooKeeper-mode controller (a KRaft
	// controller in migration writes its epoch).
	KRaftControllerEpoch int32
}

// EncodeController is ControllerZNode.encode:
// {"version":2,"brokerid":1,"timestamp":"<ms>","kraftControllerEpoch":-1}.
func EncodeController(ctl Controller) []byte {
	return object([]field{
		{"version", jInt(2)},
		{"brokerid", jInt(int64(ctl.BrokerID))},
		{"timestamp", jStr(strconv.FormatInt(ctl.Timestamp, 10))},
		{"kraftControllerEpoch", jInt(int64(ctl.KRaftControllerEpoch))},
	})
}

// DecodeController reads /controller, versions 1 and 2.
func DecodeController(data []byte) (Controller, error) {
	var j struct {
		BrokerID  *int32 `json:"brokerid"`
		Timestamp string `json:"timestamp"`
		KRaft     *int32 `json:"kraftControllerEpoch"`
	}
	if err := decodeJSON("controller", data, &j); err != nil {
		return Controller{}, err
	}
	if j.BrokerID == nil {
		return Controller{}, fmt.Errorf("zkmeta: /controller without brokerid: %q", truncate(data))
	}
	ctl := Controller{BrokerID: *j.BrokerID, KRaftControllerEpoch: -1}
	if j.KRaft != nil {
		ctl.KRaftControllerEpoch = *j.KRaft
	}
	if j.Timestamp != "" {
		ts, err := strconv.ParseInt(j.Timestamp, 10, 64)
		if err != nil {
			return Controller{}, fmt.Errorf("zkmeta: /controller timestamp %q: %w", j.Timestamp, err)
		}
		ctl.Timestamp = ts
	}
	return ctl, nil
}

// EncodeControllerEpoch is /controller_epoch: the epoch as decimal text.
func EncodeControllerEpoch(epoch int32) []byte { return []byte(strconv.Itoa(int(epoch))) }

// DecodeControllerEpoch reads /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("zkmeta: /controller_epoch %q: %w", truncate(data), err)
	}
	return int32(v), nil
}

// ControllerEpoch reads /controller_epoch: the epoch and the znode's
// version, the fencing token of every controller write; (0, -1) when it
// does not exist yet.
func (c *Client) ControllerEpoch() (epoch, zkVersion int32, err error) {
	data, st, err := c.get(PathControllerEpoch)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, err
	}
	epoch, err = DecodeControllerEpoch(data)
	return epoch, st.Version, err
}

// GetController reads /controller; exists is false when there is no
// controller.
func (c *Client) GetController() (ctl Controller, exists bool, err error) {
	data, _, err := c.get(PathController)
	if errors.Is(err, zk.ErrNoNode) {
		return Controller{}, false, nil
	}
	if err != nil {
		return Controller{}, false, err
	}
	ctl, err = DecodeController(data)
	return ctl, err == nil, err
}

// WatchController reads /controller and arms a one-shot watch on it
// (creation, change, deletion).
func (c *Client) WatchController() (ctl Controller, exists bool, changed <-chan struct{}, err error) {
	for {
		ok, _, ch, err := c.existsW(PathController)
		if err != nil {
			return Controller{}, false, nil, err
		}
		if !ok {
			return Controller{}, false, ch, nil
		}
		data, _, err := c.get(PathController)
		if errors.Is(err, zk.ErrNoNode) {
			continue // deleted between the two reads; the watch has fired
		}
		if err != nil {
			return Controller{}, false, nil, err
		}
		ctl, err := DecodeController(data)
		if err != nil {
			return Controller{}, false, nil, err
		}
		return ctl, true, ch, nil
	}
}

// ElectController is KafkaZkClient.registerControllerAndIncrementControllerEpoch:
// it reads /controller_epoch (creating it with 0 when missing), then in one
// multi creates the ephemeral /controller and sets /controller_epoch to
// epoch+1 at the version read. On success it returns the new epoch and
// /controller_epoch's new zkVersion, the fencing token for every
// controller write. Losing (NODEEXISTS or BADVERSION) is won == false, not
// an error, with the epoch and zkVersion as they are now — unless
// /controller names brokerID with the epoch this call wrote, which is a
// success whose answer was lost to a reconnect.
func (c *Client) ElectController(brokerID int32, now time.Time) (won bool, epoch, epochZkVersion int32, err error) {
	cur, ver, err := c.ControllerEpoch()
	if err != nil {
		return false, 0, 0, err
	}
	if ver < 0 {
		// KafkaController.InitialControllerEpoch and its zkVersion.
		_, err := c.create(PathControllerEpoch, EncodeControllerEpoch(0), 0)
		switch {
		case err == nil:
			cur, ver = 0, 0
		case errors.Is(err, zk.ErrNodeExists):
			if cur, ver, err = c.ControllerEpoch(); err != nil {
				return false, 0, 0, err
			}
		default:
			return false, 0, 0, err
		}
	}
	next := cur + 1
	res, err := c.multi(
		&zk.CreateRequest{Path: c.abs(PathController), Data: EncodeController(Controller{BrokerID: brokerID, Timestamp: now.UnixMilli(), KRaftControllerEpoch: -1}), Acl: acl, Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: c.abs(PathControllerEpoch), Data: EncodeControllerEpoch(next), Version: ver})
	if err == nil {
		c.log.Info("elected controller", "broker", brokerID, "epoch", next, "epoch_zk_version", res[1].Stat.Version)
		return true, next, res[1].Stat.Version, nil
	}
	if !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrBadVersion) {
		return false, 0, 0, fmt.Errorf("zkmeta: controller election: %w", err)
	}
	// checkControllerAndEpoch
	ctl, exists, cerr := c.GetController()
	if cerr != nil {
		return false, 0, 0, cerr
	}
	nowEpoch, nowVer, eerr := c.ControllerEpoch()
	if eerr != nil {
		return false, 0, 0, eerr
	}
	if exists && ctl.BrokerID == brokerID && nowEpoch == next {
		return true, next, nowVer, nil
	}
	return false, nowEpoch, nowVer, nil
}

// ResignController deletes /controller, fenced by epochZkVersion: it
// fails with ErrControllerMoved when another controller has been elected
// since (KafkaZkClient.deleteController). A missing /controller is no
// error.
func (c *Client) ResignController(epochZkVersion int32) error {
	_, err := c.fenced(epochZkVersion, &zk.DeleteRequest{Path: c.abs(PathController), Version: -1})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
