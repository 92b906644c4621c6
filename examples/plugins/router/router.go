// Package router is an example plug-in: it reads one topic and forwards
// each record to the topic its routing header names, if that route is
// known; other records go to a dead-letter topic, or are dropped (a
// filter) when there is none.
package router

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/plugin"
)

// Router routes the records of Source by the value of the Header header.
type Router struct {
	// Source is the topic read.
	Source string
	// Header names the header whose value picks the route.
	Header string
	// Routes maps a header value to the topic its records go to.
	Routes map[string]string
	// DeadLetter receives records with no header or an unknown route;
	// empty drops them.
	DeadLetter string
}

// New routes source's records by header to routes.
func New(source, header string, routes map[string]string, deadLetter string) *Router {
	return &Router{Source: source, Header: header, Routes: routes, DeadLetter: deadLetter}
}

// Name is "router-SOURCE".
func (r *Router) Name() string { return "router-" + r.Source }

// Topics is the source topic.
func (r *Router) Topics() []string { return []string{r.Source} }

// Handle forwards rec with its key, value, headers and timestamp.
func (r *Router) Handle(c *plugin.Context, rec *kgo.Record) error {
	dest := r.DeadLetter
	for _, h := range rec.Headers {
		if h.Key == r.Header {
			if t, ok := r.Routes[string(h.Value)]; ok {
				dest = t
			}
			break
		}
	}
	if dest == "" {
		return nil
	}
	c.Produce(&kgo.Record{Topic: dest, Key: rec.Key, Value: rec.Value, Headers: rec.Headers, Timestamp: rec.Timestamp})
	return nil
}
