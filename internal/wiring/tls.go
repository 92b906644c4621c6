package wiring

import (
	"fmt"
	"log/slog"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/netloop"
	"github.com/samsa-io/samsa/netloop/tlsconf"
)

// tlsListeners builds the TLS side of the broker's SSL listeners from
// their ssl.* keys (a listener.name.<listener>.ssl.* override first), one
// entry per listener as netloop.Config.TLS wants them; nil when no
// listener is SSL, so a broker without one is configured exactly as
// before. It runs before anything is opened: a keystore that cannot be
// read stops the start with an error naming the key and the file.
func tlsListeners(cfg *config.Broker, logger *slog.Logger) ([]*netloop.TLSListener, error) {
	out := make([]*netloop.TLSListener, len(cfg.Listeners))
	found := false
	for i, l := range cfg.Listeners {
		if !config.TLSProtocol(l.Protocol) {
			continue
		}
		built, err := tlsconf.Build(func(key string) (string, string) { return cfg.ListenerValue(l.Name, key) })
		if err != nil {
			return nil, fmt.Errorf("listener %s (%s): %w", l.Name, l.Protocol, err)
		}
		out[i] = &netloop.TLSListener{Config: built.Config, Principal: built.Principal}
		found = true
		leaf := built.Keystore.Leaf()
		auth, _ := cfg.ListenerValue(l.Name, tlsconf.KeyClientAuth)
		logger.Info("TLS listener", "listener", l.Name, "address", l.Address(), "certificate", tlsconf.SubjectDN(leaf),
			"not_after", leaf.NotAfter, "client_auth", auth)
	}
	if !found {
		return nil, nil
	}
	return out, nil
}
