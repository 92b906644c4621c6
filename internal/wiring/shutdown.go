package wiring

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/interbroker"
)

// controlledShutdown is Kafka's controlled shutdown: before it stops, the
// broker asks the controller to move the leaderships it holds to other
// in-sync replicas, so clients switch leaders without waiting for the
// session timeout. It asks up to controlled.shutdown.max.retries times,
// pausing controlled.shutdown.retry.backoff.ms between, while partitions
// remain or the controller cannot be reached, and gives up within ctx; a
// failed attempt only costs clients the failover they would have had
// anyway.
func (cn *clusterNode) controlledShutdown(ctx context.Context) {
	cfg := cn.cfg
	if !cfg.ControlledShutdown {
		return
	}
	client := interbroker.New(interbroker.Config{ClientID: "samsa-broker-" + strconv.Itoa(int(cn.info.ID)) + "-shutdown", Log: cn.log,
		Timeout: max(cfg.SessionTimeout, 5*time.Second), Security: cn.sec})
	defer client.Close()
	for attempt := 0; attempt <= cfg.ControlledShutdownRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				cn.log.Warn("controlled shutdown ran out of time; stopping with leaderships still here", "attempts", attempt)
				return
			case <-time.After(cfg.ControlledShutdownBackoff):
			}
		}
		addr, ok := cn.controllerAddr()
		if !ok {
			cn.log.Warn("controlled shutdown: no controller known yet", "attempt", attempt+1)
			continue
		}
		req := kmsg.NewPtrControlledShutdownRequest()
		req.BrokerID, req.BrokerEpoch = cn.info.ID, cn.broker.BrokerEpoch()
		resp, err := client.Send(ctx, addr, req)
		if err != nil {
			cn.log.Warn("controlled shutdown: the controller did not answer", "controller", addr, "attempt", attempt+1, "err", err)
			continue
		}
		r := resp.(*kmsg.ControlledShutdownResponse)
		if r.ErrorCode == 0 && len(r.PartitionsRemaining) == 0 {
			cn.log.Info("controlled shutdown: the controller moved every leadership away", "attempts", attempt+1)
			return
		}
		cn.log.Warn("controlled shutdown: not done yet", "error_code", r.ErrorCode, "partitions_remaining", len(r.PartitionsRemaining), "attempt", attempt+1)
	}
	cn.log.Warn("controlled shutdown did not complete; stopping anyway (the controller moves the rest when the registration goes)")
}

// controllerAddr is the controller's inter-broker address, from the view.
func (cn *clusterNode) controllerAddr() (string, bool) {
	return cn.broker.ClusterView().ControllerAddr(cn.cfg.InterBrokerListener)
}
