package console

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Options configure a console.
type Options struct {
	// Seeds are the Kafka addresses the console's clients dial first
	// (host:port): the broker's own listener when mounted in a broker.
	Seeds []string
	// TLS, if set, is used to dial the seeds (an SSL or SASL_SSL
	// listener).
	TLS *tls.Config
	// Mechanisms are the SASL mechanisms of the seeds' listener (PLAIN,
	// SCRAM-SHA-256, SCRAM-SHA-512). Empty: the listener has no SASL and
	// the console asks nobody to sign in.
	Mechanisms []string
	// ReadOnly refuses every change (samsa.console.read.only).
	ReadOnly bool
	// Logger receives one line per failed request to the cluster.
	Logger *slog.Logger
	// Timeout bounds the Kafka requests behind one page (default 15s).
	Timeout time.Duration
	// Schemas, if set, decodes keys and values in Confluent's wire format
	// (a zero byte, a schema id, the encoded data) through the Schema
	// Registry: the message browser's "schema" format.
	Schemas SchemaDecoder
}

// SchemaDecoder turns a payload in Confluent's wire format into JSON and
// says which schema id it was written with (web/schemaregistry.Registry).
type SchemaDecoder interface {
	Deserialize(ctx context.Context, payload []byte) (json.RawMessage, int, error)
}

// Console is the web console, an http.Handler to mount at /.
type Console struct {
	opts     Options
	pages    *pages
	sessions *sessions
	mux      *http.ServeMux
}

// defaultTimeout bounds one page's Kafka requests when Options says nothing.
const defaultTimeout = 15 * time.Second

// New builds the console; it dials nothing until a page is asked for.
func New(opts Options) *Console {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	c := &Console{opts: opts, pages: mustParsePages(), sessions: newSessions(), mux: http.NewServeMux()}
	c.routes()
	return c
}

func (c *Console) routes() {
	c.mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles()))
	c.mux.HandleFunc("GET /login", c.loginPage)
	c.mux.HandleFunc("POST /login", c.login)
	c.mux.HandleFunc("POST /logout", c.logout)

	pages := map[string]pageFunc{
		"GET /{$}":                     c.clusterPage,
		"GET /topics":                  c.topicsPage,
		"GET /topics/{topic}":          c.topicPage,
		"GET /topics/{topic}/messages": c.messagesPage,
		"GET /topics/{topic}/offsets":  c.topicOffsets,
		"GET /security":                c.securityPage,
		"GET /groups":                  c.groupsPage,
		"GET /groups/{group}":          c.groupPage,
		"GET /groups/{group}/lag":      c.groupLagFragment,
		"POST /topics":                 c.createTopic,
		"POST /topics/{topic}/delete":  c.deleteTopic,
		"POST /topics/{topic}/configs": c.alterTopicConfigs,
		"POST /topics/{topic}/produce": c.produce,
		"POST /groups/{group}/reset":   c.resetOffsets,
	}
	for pattern, fn := range pages {
		if strings.HasPrefix(pattern, "POST ") {
			c.mux.Handle(pattern, c.write(fn))
		} else {
			c.mux.Handle(pattern, c.read(fn))
		}
	}

	c.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, &pageError{Status: http.StatusNotFound, Title: "Not found", Detail: "No console page at " + r.URL.Path + "."})
	})
}

// ServeHTTP serves the console's pages with headers that keep them out
// of frames and other origins' scripts.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}
