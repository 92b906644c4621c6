package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// contentType is Confluent's media type; clients sending
// application/json (or nothing) are served the same.
const contentType = "application/vnd.schemaregistry.v1+json"

// maxBody bounds a request body: schemas are text, not data.
const maxBody = 16 << 20

// readyWait is how long a request waits for a registry still reading
// `_schemas` (a broker just started) before it is told to retry.
const readyWait = 10 * time.Second

// Handlers are the REST API's routes, mounted by pattern on the broker's
// HTTP server (never "/": the console has it).
func (r *Registry) Handlers() map[string]http.Handler {
	routes := map[string]func(http.ResponseWriter, *http.Request) (any, error){
		"GET /subjects":                                             r.httpSubjects,
		"GET /subjects/{subject}/versions":                          r.httpVersions,
		"POST /subjects/{subject}/versions":                         r.httpRegister,
		"GET /subjects/{subject}/versions/{version}":                r.httpGetVersion,
		"GET /subjects/{subject}/versions/{version}/referencedby":   r.httpReferencedBy,
		"DELETE /subjects/{subject}/versions/{version}":             r.httpDeleteVersion,
		"POST /subjects/{subject}":                                  r.httpLookup,
		"DELETE /subjects/{subject}":                                r.httpDeleteSubject,
		"GET /schemas/ids/{id}":                                     r.httpSchemaByID,
		"GET /schemas/ids/{id}/subjects":                            r.httpIDSubjects,
		"GET /schemas/ids/{id}/versions":                            r.httpIDVersions,
		"GET /schemas":                                              r.httpSchemas,
		"GET /contexts":                                             func(http.ResponseWriter, *http.Request) (any, error) { return []string{"."}, nil },
		"GET /schemas/types":                                        func(http.ResponseWriter, *http.Request) (any, error) { return schemaTypes, nil },
		"POST /compatibility/subjects/{subject}/versions/{version}": r.httpCompatibility,
		"POST /compatibility/subjects/{subject}/versions":           r.httpCompatibility,
		"GET /config":                                               r.settingGet(compatibilitySetting),
		"GET /config/{subject}":                                     r.settingGet(compatibilitySetting),
		"PUT /config":                                               r.settingPut(compatibilitySetting),
		"PUT /config/{subject}":                                     r.settingPut(compatibilitySetting),
		"DELETE /config":                                            r.settingDelete(compatibilitySetting),
		"DELETE /config/{subject}":                                  r.settingDelete(compatibilitySetting),
		"GET /mode":                                                 r.settingGet(modeSetting),
		"GET /mode/{subject}":                                       r.settingGet(modeSetting),
		"PUT /mode":                                                 r.settingPut(modeSetting),
		"PUT /mode/{subject}":                                       r.settingPut(modeSetting),
		"DELETE /mode/{subject}":                                    r.settingDelete(modeSetting),
	}
	out := make(map[string]http.Handler, len(routes)+2)
	for pattern, fn := range routes {
		h := jsonHandler(fn)
		if method, _, _ := strings.Cut(pattern, " "); method == http.MethodPut || method == http.MethodDelete ||
			pattern == "POST /subjects/{subject}/versions" {
			h = r.writing(h)
		}
		out[pattern] = h
	}
	// The raw schema text, not JSON-wrapped.
	out["GET /subjects/{subject}/versions/{version}/schema"] = rawHandler(func(req *http.Request) (string, error) {
		v, err := r.httpGetVersion(nil, req)
		if err != nil {
			return "", err
		}
		return v.(*Version).Schema, nil
	})
	out["GET /schemas/ids/{id}/schema"] = rawHandler(func(req *http.Request) (string, error) {
		v, err := r.httpSchemaByID(nil, req)
		if err != nil {
			return "", err
		}
		return v.(idSchema).Schema, nil
	})
	return out
}

// jsonHandler answers with fn's value as JSON, or its error in
// Confluent's body ({"error_code":...,"message":...}) with the status the
// code names.
func jsonHandler(fn func(http.ResponseWriter, *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), readyWait)
		defer cancel()
		v, err := fn(w, req.WithContext(ctx))
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		_ = json.NewEncoder(w).Encode(v)
	})
}

func rawHandler(fn func(*http.Request) (string, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), readyWait)
		defer cancel()
		s, err := fn(req.WithContext(ctx))
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, s)
	})
}

func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = errorf(codeStoreError, "%v", err)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(e.Status())
	_ = json.NewEncoder(w).Encode(e)
}

func flag(req *http.Request, name string) bool {
	b, _ := strconv.ParseBool(req.URL.Query().Get(name))
	return b
}

func decodeBody(req *http.Request, into any) error {
	dec := json.NewDecoder(io.LimitReader(req.Body, maxBody))
	if err := dec.Decode(into); err != nil {
		return errorf(codeUnprocessable, "Unrecognized request body: %v", err)
	}
	return nil
}

func pathVersion(req *http.Request) (int, error) { return ParseVersion(req.PathValue("version")) }

func pathID(req *http.Request) (int, error) {
	id, err := strconv.Atoi(req.PathValue("id"))
	if err != nil || id <= 0 {
		return 0, errorf(codeSchemaNotFound, "Schema %s not found", req.PathValue("id"))
	}
	return id, nil
}

func (r *Registry) httpSubjects(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.Subjects(req.Context(), flag(req, "deleted"))
}

func (r *Registry) httpVersions(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.Versions(req.Context(), req.PathValue("subject"), flag(req, "deleted"))
}

func (r *Registry) httpRegister(_ http.ResponseWriter, req *http.Request) (any, error) {
	var q RegisterRequest
	if err := decodeBody(req, &q); err != nil {
		return nil, err
	}
	v, err := r.Register(req.Context(), req.PathValue("subject"), &q, flag(req, "normalize"))
	if err != nil {
		return nil, err
	}
	return map[string]int{"id": v.ID}, nil
}

func (r *Registry) httpLookup(_ http.ResponseWriter, req *http.Request) (any, error) {
	var q RegisterRequest
	if err := decodeBody(req, &q); err != nil {
		return nil, err
	}
	return r.Lookup(req.Context(), req.PathValue("subject"), &q, flag(req, "normalize"), flag(req, "deleted"))
}

func (r *Registry) httpGetVersion(_ http.ResponseWriter, req *http.Request) (any, error) {
	n, err := pathVersion(req)
	if err != nil {
		return nil, err
	}
	v, err := r.GetVersion(req.Context(), req.PathValue("subject"), n, flag(req, "deleted"))
	if err != nil {
		return nil, err
	}
	v.Schema = r.inFormat(v, req.URL.Query().Get("format"))
	return v, nil
}

// inFormat is v's schema text in the ?format asked for: "serialized"
// gives a Protobuf schema as a base64 FileDescriptorProto (what
// confluent-kafka-python's Protobuf deserializer asks for); anything
// else, the text as registered.
func (r *Registry) inFormat(v *Version, format string) string {
	if format != "serialized" || v.SchemaType != typeProtobuf {
		return v.Schema
	}
	r.mu.RLock()
	p, err := r.parse(v.SchemaType, v.Schema, v.References)
	r.mu.RUnlock()
	if err != nil {
		return v.Schema
	}
	return p.(protobufSchema).serialized()
}

func (r *Registry) httpReferencedBy(_ http.ResponseWriter, req *http.Request) (any, error) {
	n, err := pathVersion(req)
	if err != nil {
		return nil, err
	}
	v, err := r.GetVersion(req.Context(), req.PathValue("subject"), n, false)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := []int{}
	for _, u := range r.st.referencedBy(v.Subject, v.Version) {
		ids = append(ids, u.ID)
	}
	return ids, nil
}

func (r *Registry) httpDeleteVersion(_ http.ResponseWriter, req *http.Request) (any, error) {
	n, err := pathVersion(req)
	if err != nil {
		return nil, err
	}
	return r.DeleteVersion(req.Context(), req.PathValue("subject"), n, flag(req, "permanent"))
}

func (r *Registry) httpDeleteSubject(_ http.ResponseWriter, req *http.Request) (any, error) {
	return r.DeleteSubject(req.Context(), req.PathValue("subject"), flag(req, "permanent"))
}

// httpSchemas is GET /schemas: every subject's versions (?deleted,
// ?latestOnly, ?subjectPrefix), as a schema browser lists them.
func (r *Registry) httpSchemas(_ http.ResponseWriter, req *http.Request) (any, error) {
	if err := r.awaitReady(req.Context()); err != nil {
		return nil, err
	}
	deleted, latestOnly := flag(req, "deleted"), flag(req, "latestOnly")
	prefix := req.URL.Query().Get("subjectPrefix")
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []Version{}
	for _, subject := range r.st.subjectNames(deleted) {
		if !strings.HasPrefix(subject, prefix) {
			continue
		}
		vs := r.st.versions(subject, deleted)
		if latestOnly {
			vs = vs[len(vs)-1:]
		}
		for _, v := range vs {
			out = append(out, *v)
		}
	}
	return out, nil
}

// idSchema is the body of GET /schemas/ids/{id}.
type idSchema struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
}

func (r *Registry) httpSchemaByID(_ http.ResponseWriter, req *http.Request) (any, error) {
	id, err := pathID(req)
	if err != nil {
		return nil, err
	}
	v, err := r.SchemaByID(req.Context(), id)
	if err != nil {
		return nil, err
	}
	out := idSchema{Schema: r.inFormat(v, req.URL.Query().Get("format")), References: v.References}
	if v.SchemaType != typeAvro {
		out.SchemaType = v.SchemaType
	}
	return out, nil
}

func (r *Registry) httpIDVersions(_ http.ResponseWriter, req *http.Request) (any, error) {
	id, err := pathID(req)
	if err != nil {
		return nil, err
	}
	return r.IDVersions(req.Context(), id, flag(req, "deleted"))
}

func (r *Registry) httpIDSubjects(_ http.ResponseWriter, req *http.Request) (any, error) {
	id, err := pathID(req)
	if err != nil {
		return nil, err
	}
	uses, err := r.IDVersions(req.Context(), id, flag(req, "deleted"))
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, u := range uses {
		if len(out) == 0 || out[len(out)-1] != u.Subject {
			out = append(out, u.Subject)
		}
	}
	return out, nil
}

func (r *Registry) httpCompatibility(_ http.ResponseWriter, req *http.Request) (any, error) {
	version := 0
	if req.PathValue("version") != "" {
		n, err := pathVersion(req)
		if err != nil {
			return nil, err
		}
		version = n
	}
	var q RegisterRequest
	if err := decodeBody(req, &q); err != nil {
		return nil, err
	}
	problems, err := r.CheckCompatibility(req.Context(), req.PathValue("subject"), version, &q, flag(req, "normalize"))
	if err != nil {
		return nil, err
	}
	out := map[string]any{"is_compatible": len(problems) == 0}
	if flag(req, "verbose") {
		out["messages"] = problems
	}
	return out, nil
}

// settingGet, settingPut and settingDelete serve /config and /mode.
func (r *Registry) settingGet(set *setting) func(http.ResponseWriter, *http.Request) (any, error) {
	return func(_ http.ResponseWriter, req *http.Request) (any, error) {
		v, err := r.Setting(req.Context(), set, req.PathValue("subject"), flag(req, "defaultToGlobal"))
		if err != nil {
			return nil, err
		}
		return map[string]string{set.field: v}, nil
	}
}

func (r *Registry) settingPut(set *setting) func(http.ResponseWriter, *http.Request) (any, error) {
	return func(_ http.ResponseWriter, req *http.Request) (any, error) {
		var body map[string]any
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
		value, _ := body[set.putField].(string)
		if value == "" {
			return nil, set.invalid
		}
		v, err := r.SetSetting(req.Context(), set, req.PathValue("subject"), value, flag(req, "force"))
		if err != nil {
			return nil, err
		}
		return map[string]string{set.putField: v}, nil
	}
}

func (r *Registry) settingDelete(set *setting) func(http.ResponseWriter, *http.Request) (any, error) {
	return func(_ http.ResponseWriter, req *http.Request) (any, error) {
		v, err := r.SetSetting(req.Context(), set, req.PathValue("subject"), "", false)
		if err != nil {
			return nil, err
		}
		return map[string]string{set.field: v}, nil
	}
}
