package wiring

import (
	"fmt"
	"log/slog"
	"strings"

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
func tlsListeners(cfg *config.Broker, logger *slog.Logger) ([]*netloop.TLSListener, keystores, error) {
	out := make([]*netloop.TLSListener, len(cfg.Listeners))
	stores := keystores{}
	found := false
	for i, l := range cfg.Listeners {
		if !config.TLSProtocol(l.Protocol) {
			continue
		}
		built, err := tlsconf.Build(func(key string) (string, string) { return cfg.ListenerValue(l.Name, key) })
		if err != nil {
			return nil, nil, fmt.Errorf("listener %s (%s): %w", l.Name, l.Protocol, err)
		}
		out[i] = &netloop.TLSListener{Config: built.Config, Principal: built.Principal}
		stores[strings.ToLower(l.Name)] = built.Keystore
		found = true
		leaf := built.Keystore.Leaf()
		auth, _ := cfg.ListenerValue(l.Name, tlsconf.KeyClientAuth)
		logger.Info("TLS listener", "listener", l.Name, "address", l.Address(), "certificate", tlsconf.SubjectDN(leaf),
			"not_after", leaf.NotAfter, "client_auth", auth)
	}
	if !found {
		return nil, nil, nil
	}
	return out, stores, nil
}

// keystores are the SSL listeners' keystores, by listener name in lower
// case (as listener.name.<listener>.* spells it).
type keystores map[string]*tlsconf.Keystore

// check is actors.Options.CheckKeystore: the keystore listener would read
// with the settings layers resolve, read now and thrown away, so that
// AlterConfigs refuses a keystore the listener could not load, or whose
// certificate names another subject or other hosts than the current one
// (unless ssl.allow.dn.changes / ssl.allow.san.changes, as in Kafka),
// before anything is stored. A listener that is not SSL has none to
// check.
func (ks keystores) check(listener string, layers config.Layers) error {
	current := ks[listener]
	if current == nil {
		return nil
	}
	get := layerSettings(listener, layers)
	next, err := tlsconf.LoadKeystore(get)
	if err != nil {
		return err
	}
	return tlsconf.CheckRotation(current.Leaf(), next.Leaf(), get)
}

// layerSettings reads a listener's ssl.* settings from the layers: its
// listener.name.<listener>.* override first, dynamic over static.
func layerSettings(listener string, layers config.Layers) tlsconf.Getter {
	return func(key string) (string, string) {
		e, _ := config.ResolveBroker("listener.name."+listener+"."+key, layers)
		if len(e.Synonyms) > 0 {
			return e.Value, e.Synonyms[0].Name
		}
		return e.Value, key
	}
}

// reload is actors.Options.OnKeystores: AlterConfigs changed the keystore
// settings of listeners, so their keystores are read again with the
// settings the layers now resolve (dynamic over static, the listener's
// override over the key). New handshakes get the new certificate;
// connections already made keep theirs. AlterConfigs has checked the
// keystore (check); one that cannot be read all the same (its file
// changed since) leaves the listener on its current certificate, with an
// error line naming the key and the file.
func (ks keystores) reload(logger *slog.Logger) func(listeners []string, layers config.Layers) {
	return func(listeners []string, layers config.Layers) {
		for _, l := range listeners {
			store := ks[l]
			if store == nil {
				logger.Warn("keystore settings changed for a listener that is not SSL; nothing to reload", "listener", l)
				continue
			}
			if err := store.Reload(layerSettings(l, layers)); err != nil {
				logger.Error("cannot reload the keystore of a TLS listener; it keeps serving its previous certificate",
					"listener", l, "err", err)
				continue
			}
			leaf := store.Leaf()
			logger.Info("TLS keystore reloaded", "listener", l, "certificate", tlsconf.SubjectDN(leaf), "not_after", leaf.NotAfter)
		}
	}
}
