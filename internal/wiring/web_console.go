package wiring

import (
	"crypto/tls"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/web/console"
)

// consoleListenerPreference is the order the console picks the broker's
// listener to talk to: a SASL listener first, so that when security is on
// the console signs users in and runs as them (their ACLs apply), and
// plaintext before TLS, which is only the same bytes encrypted on
// loopback.
var consoleListenerPreference = []string{"SASL_PLAINTEXT", "SASL_SSL", "PLAINTEXT", "SSL"}

// mountConsole mounts the web console at / on the HTTP side, as a Kafka
// client of one of this broker's own listeners. Nothing when there is no
// HTTP side.
func mountConsole(node *Node, cfg *config.Broker, logger *slog.Logger) {
	if node.Web == nil {
		return
	}
	bound := node.Server.Addrs()
	best, bestRank := -1, len(consoleListenerPreference)
	for i, l := range cfg.Listeners {
		for rank, p := range consoleListenerPreference {
			if l.Protocol == p && rank < bestRank && i < len(bound) {
				best, bestRank = i, rank
			}
		}
	}
	if best < 0 {
		logger.Warn("web console off: the broker has no listener it can use")
		return
	}
	l := cfg.Listeners[best]
	opts := console.Options{
		Seeds:    []string{dialable(bound[best])},
		ReadOnly: config.ParseBool(cfg.Value(config.KeyConsoleReadOnly)),
		Logger:   logger.With("component", "console"),
	}
	if strings.HasPrefix(l.Protocol, "SASL_") {
		mechs := cfg.Static["listener.name."+strings.ToLower(l.Name)+".sasl.enabled.mechanisms"]
		if mechs == "" {
			mechs = cfg.Value("sasl.enabled.mechanisms")
		}
		opts.Mechanisms = config.ParseList(mechs)
	}
	if strings.HasSuffix(l.Protocol, "SSL") {
		// The console dials its own broker on loopback; the certificate
		// names the advertised host, not 127.0.0.1, so it is not checked.
		opts.TLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // own listener on loopback
	}
	node.Web.Handle("/", console.New(opts))
	logger.Info("web console mounted", "listener", l.Name, "read_only", opts.ReadOnly, "sign_in", len(opts.Mechanisms) > 0)
}

// dialable is a bound address a local client can dial: a wildcard host
// becomes loopback.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if tcp.IP != nil && tcp.IP.To4() == nil {
			ip = net.IPv6loopback
		}
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}
