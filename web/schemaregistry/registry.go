package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// The modes of /mode: READONLY refuses writes; IMPORT takes schemas with
// the ids and versions they had elsewhere (a migration), refusing
// ordinary registration.
const (
	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
)

var modes = []string{modeReadWrite, modeReadOnly, modeReadOnlyOverride, modeImport}

// Log is where the registry's records go: Append returns once every one
// of recs has been read back and applied (Registry.Apply), or with the
// error that kept them from being written.
type Log interface {
	Append(ctx context.Context, recs []Record) error
}

// Registry is the Schema Registry: the state built from the log, and the
// operations of Confluent's API on it.
type Registry struct {
	mu sync.RWMutex
	st *state

	// writeMu makes one write at a time: a write checks the state and
	// appends what that check allowed, with no other write between.
	writeMu sync.Mutex
	log     Log
	// leadership (nil: a single broker, always the writer) and the term
	// this registry last caught up in as the writer.
	leadership Leadership
	syncedTerm int64

	ready     chan struct{} // closed once the log has been read to its end
	readyOnce sync.Once
}

// New is a registry with an empty state writing to log (which may be
// set later with SetLog, before MarkReady); records reach it by Apply.
func New(log Log) *Registry {
	return &Registry{st: newState(), log: log, ready: make(chan struct{})}
}

// SetLog sets the log writes go to.
func (r *Registry) SetLog(log Log) {
	r.writeMu.Lock()
	r.log = log
	r.writeMu.Unlock()
}

// Apply folds one `_schemas` record (a nil value is a tombstone) into the
// state. The log's reader calls it, in log order.
func (r *Registry) Apply(key, value []byte) {
	r.mu.Lock()
	r.st.apply(key, value)
	r.mu.Unlock()
}

// MarkReady says the log has been read to its end: requests are served
// from then on (before, they wait, so nobody sees a half-read registry).
func (r *Registry) MarkReady() { r.readyOnce.Do(func() { close(r.ready) }) }

func (r *Registry) awaitReady(ctx context.Context) error {
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
		return errorf(codeTimeout, "the schema registry is still reading the _schemas topic: %v", ctx.Err())
	}
}

func (r *Registry) append(ctx context.Context, recs ...Record) error {
	if r.log == nil {
		return errorf(codeStoreError, "the schema registry has no store")
	}
	if err := r.log.Append(ctx, recs); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return errorf(codeStoreError, "Error while writing to the _schemas topic: %v", err)
	}
	return nil
}

// RegisterRequest is the body of POST /subjects/{s}/versions (and of the
// lookup and compatibility calls).
type RegisterRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	// ID and Version are for IMPORT mode: the id and version the schema
	// had in the registry it comes from.
	ID      int `json:"id,omitempty"`
	Version int `json:"version,omitempty"`
}

func (q *RegisterRequest) schemaType() string {
	if q.SchemaType == "" {
		return typeAvro
	}
	return q.SchemaType
}

// modeOf and levelOf are the subject's mode and compatibility level:
// its own, else the global one, else the default.
func (r *Registry) modeOf(subject string) string { return r.st.effective(modeSetting, subject) }
func (r *Registry) levelOf(subject string) string {
	return r.st.effective(compatibilitySetting, subject)
}

func writable(mode, subject string) *Error {
	if mode == modeReadOnly || mode == modeReadOnlyOverride {
		return errorf(codeOperationNotPermitted, "Subject %s is in read-only mode", subject)
	}
	return nil
}

// resolveRefs collects the schemas refs name, dependencies first, each
// once; the caller holds r.mu.
func (r *Registry) resolveRefs(refs []Reference) ([]namedSchema, error) {
	var out []namedSchema
	done := map[string]bool{}
	var visit func(refs []Reference, depth int) error
	visit = func(refs []Reference, depth int) error {
		if depth > 32 {
			return errors.New("references nest deeper than 32")
		}
		for _, ref := range refs {
			if done[ref.Name] {
				continue
			}
			v := r.versionEntry(ref.Subject, ref.Version, false)
			if v == nil {
				return fmt.Errorf("reference %s: version %d of subject %s not found", ref.Name, ref.Version, ref.Subject)
			}
			if err := visit(v.References, depth+1); err != nil {
				return err
			}
			done[ref.Name] = true
			out = append(out, namedSchema{name: ref.Name, schema: v.Schema})
		}
		return nil
	}
	return out, visit(refs, 0)
}

// versionEntry finds a version: -1 is the latest live one.
func (r *Registry) versionEntry(subject string, version int, deleted bool) *Version {
	if version == -1 {
		return r.st.latest(subject)
	}
	e := r.st.subjects[subject][version]
	if e == nil || (e.Deleted && !deleted) {
		return nil
	}
	return e
}

// parse parses the request's schema with its references; the caller
// holds r.mu.
func (r *Registry) parse(schemaType, schema string, refs []Reference) (parsedSchema, error) {
	named, err := r.resolveRefs(refs)
	if err != nil {
		return nil, errorf(codeInvalidSchema, "Invalid schema: %v", err)
	}
	p, err := parseSchema(schemaType, schema, named)
	if err != nil {
		return nil, errorf(codeInvalidSchema, "Invalid schema %s: %v", schemaType, err)
	}
	return p, nil
}

// prepared is a request's schema parsed, in the text it is stored as.
type prepared struct {
	parsed parsedSchema
	text   string
	key    content
}

func (r *Registry) prepare(q *RegisterRequest, normalize bool) (*prepared, error) {
	if q.Schema == "" {
		return nil, errorf(codeInvalidSchema, "Empty schema")
	}
	p, err := r.parse(q.schemaType(), q.Schema, q.References)
	if err != nil {
		return nil, err
	}
	text := q.Schema
	if normalize {
		text = p.normalized()
	}
	return &prepared{parsed: p, text: text, key: contentOf(q.schemaType(), text, q.References)}, nil
}

// findContent is the subject's version holding key (soft-deleted ones
// when deleted is set), newest first.
func (r *Registry) findContent(subject string, key content, deleted bool) *Version {
	vs := r.st.versions(subject, deleted)
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if contentOf(v.SchemaType, v.Schema, v.References) == key {
			return v
		}
	}
	return nil
}

// previousParsed parses the subject's live versions, oldest first.
func (r *Registry) previousParsed(subject, schemaType string) ([]parsedSchema, error) {
	var out []parsedSchema
	for _, v := range r.st.versions(subject, false) {
		if v.SchemaType != schemaType {
			return nil, errorf(codeIncompatible, "Schema being registered is incompatible with an earlier schema for subject \"%s\", details: [schema type changed from %s to %s]", subject, v.SchemaType, schemaType)
		}
		p, err := r.parse(v.SchemaType, v.Schema, v.References)
		if err != nil {
			return nil, errorf(codeStoreError, "version %d of subject %s no longer parses: %v", v.Version, subject, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Register registers q's schema under subject (POST
// /subjects/{s}/versions) and returns its entry: the existing one when
// the subject already has this schema.
func (r *Registry) Register(ctx context.Context, subject string, q *RegisterRequest, normalize bool) (*Version, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	v, exists, err := r.planRegister(subject, q, normalize)
	if err != nil || exists {
		return v, err
	}
	if err := r.append(ctx, schemaRecord(*v, false)); err != nil {
		return nil, err
	}
	return v, nil
}

// planRegister checks a registration against the state and says which id
// and version it gets, or (exists) the version that already holds it.
func (r *Registry) planRegister(subject string, q *RegisterRequest, normalize bool) (v *Version, exists bool, err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if subject == "" {
		return nil, false, errorf(codeInvalidSchema, "Empty subject")
	}
	mode := r.modeOf(subject)
	if err := writable(mode, subject); err != nil {
		return nil, false, err
	}
	p, err := r.prepare(q, normalize)
	if err != nil {
		return nil, false, err
	}
	if existing := r.findContent(subject, p.key, false); existing != nil && (q.ID == 0 || q.ID == existing.ID) {
		found := *existing
		return &found, true, nil
	}
	v = &Version{Subject: subject, SchemaType: q.schemaType(), References: q.References, Schema: p.text}
	if mode == modeImport {
		if q.ID <= 0 {
			return nil, false, errorf(codeOperationNotPermitted, "Subject %s is in import mode: a schema must come with its id", subject)
		}
		if e := r.st.ids[q.ID]; e != nil && contentOf(e.SchemaType, e.Schema, e.References) != p.key {
			return nil, false, errorf(codeOperationNotPermitted, "Overwrite new schema with id %d is not permitted.", q.ID)
		}
		v.ID, v.Version = q.ID, q.Version
		if v.Version <= 0 {
			v.Version = r.st.nextVersion(subject)
		}
		return v, false, nil
	}
	if id, ok := r.st.byContent[p.key]; q.ID > 0 && (!ok || id != q.ID) {
		return nil, false, errorf(codeOperationNotPermitted, "Subject %s is not in import mode: a schema's id is the registry's to choose", subject)
	}
	previous, err := r.previousParsed(subject, v.SchemaType)
	if err != nil {
		return nil, false, err
	}
	if problems := compatibilityProblems(r.levelOf(subject), p.parsed, previous); len(problems) > 0 {
		return nil, false, errorf(codeIncompatible, "Schema being registered is incompatible with an earlier schema for subject \"%s\", details: %v", subject, problems)
	}
	v.Version = r.st.nextVersion(subject)
	if id, ok := r.st.byContent[p.key]; ok {
		v.ID = id
	} else {
		v.ID = r.st.maxID + 1
	}
	return v, false, nil
}

// readSubject waits for the registry to be ready and read-locks it for a
// request about subject, which must have versions (soft-deleted ones
// count when deleted is set); the caller unlocks.
func (r *Registry) readSubject(ctx context.Context, subject string, deleted bool) (unlock func(), err error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	if len(r.st.versions(subject, deleted)) == 0 {
		r.mu.RUnlock()
		return nil, errSubjectNotFound(subject)
	}
	return r.mu.RUnlock, nil
}

// Lookup finds the version of subject holding q's schema (POST
// /subjects/{s}).
func (r *Registry) Lookup(ctx context.Context, subject string, q *RegisterRequest, normalize, deleted bool) (*Version, error) {
	unlock, err := r.readSubject(ctx, subject, deleted)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, err := r.prepare(q, normalize)
	if err != nil {
		return nil, err
	}
	v := r.findContent(subject, p.key, deleted)
	if v == nil && !normalize {
		// The stored text may be the normalized one.
		v = r.findContent(subject, contentOf(q.schemaType(), p.parsed.normalized(), q.References), deleted)
	}
	if v == nil {
		return nil, errSchemaNotFound()
	}
	out := *v
	return &out, nil
}

// ParseVersion reads a version path parameter: "latest" (or -1) is -1,
// else 1..2^31-1.
func ParseVersion(s string) (int, error) {
	if s == "latest" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n == 0 || n < -1 || n > math.MaxInt32 {
		return 0, errorf(codeInvalidVersion, "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", s)
	}
	return n, nil
}

// GetVersion is GET /subjects/{s}/versions/{v}.
func (r *Registry) GetVersion(ctx context.Context, subject string, version int, deleted bool) (*Version, error) {
	unlock, err := r.readSubject(ctx, subject, deleted)
	if err != nil {
		return nil, err
	}
	defer unlock()
	v := r.versionEntry(subject, version, deleted)
	if v == nil {
		return nil, errVersionNotFound(subject, version)
	}
	out := *v
	return &out, nil
}

// Versions is GET /subjects/{s}/versions.
func (r *Registry) Versions(ctx context.Context, subject string, deleted bool) ([]int, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	vs := r.st.versions(subject, deleted)
	if len(vs) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out, nil
}

// Subjects is GET /subjects.
func (r *Registry) Subjects(ctx context.Context, deleted bool) ([]string, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := r.st.subjectNames(deleted)
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// SchemaByID is GET /schemas/ids/{id}.
func (r *Registry) SchemaByID(ctx context.Context, id int) (*Version, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e := r.st.ids[id]
	if e == nil {
		return nil, errorf(codeSchemaNotFound, "Schema %d not found", id)
	}
	out := *e
	return &out, nil
}

// SubjectVersion is one use of a schema id.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// IDVersions is GET /schemas/ids/{id}/versions: every live (or, with
// deleted, any) version using the id.
func (r *Registry) IDVersions(ctx context.Context, id int, deleted bool) ([]SubjectVersion, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.st.ids[id] == nil {
		return nil, errorf(codeSchemaNotFound, "Schema %d not found", id)
	}
	out := []SubjectVersion{}
	for _, subject := range r.st.subjectNames(true) {
		for _, v := range r.st.versions(subject, deleted) {
			if v.ID == id {
				out = append(out, SubjectVersion{Subject: subject, Version: v.Version})
			}
		}
	}
	return out, nil
}

// DeleteVersion is DELETE /subjects/{s}/versions/{v}: soft first, then
// (permanent) for good.
func (r *Registry) DeleteVersion(ctx context.Context, subject string, version int, permanent bool) (int, error) {
	if err := r.awaitReady(ctx); err != nil {
		return 0, err
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	rec, n, err := r.planDeleteVersion(subject, version, permanent)
	if err != nil {
		return 0, err
	}
	return n, r.append(ctx, rec)
}

func (r *Registry) planDeleteVersion(subject string, version int, permanent bool) (Record, int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if err := writable(r.modeOf(subject), subject); err != nil {
		return Record{}, 0, err
	}
	if len(r.st.versions(subject, true)) == 0 {
		return Record{}, 0, errSubjectNotFound(subject)
	}
	if permanent && version == -1 {
		return Record{}, 0, errorf(codeInvalidVersion, "The specified version 'latest' is not a valid version id for a permanent delete")
	}
	v := r.versionEntry(subject, version, true)
	if v == nil {
		return Record{}, 0, errVersionNotFound(subject, version)
	}
	if users := r.st.referencedBy(subject, v.Version); len(users) > 0 {
		return Record{}, 0, errorf(codeReferenceExists, "One or more references exist to the schema {subject=%s,version=%d}", subject, v.Version)
	}
	if !permanent {
		if v.Deleted {
			return Record{}, 0, errorf(codeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted. Set permanent=true to delete permanently", subject, v.Version)
		}
		return schemaRecord(*v, true), v.Version, nil
	}
	if !v.Deleted {
		return Record{}, 0, errorf(codeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, v.Version)
	}
	return schemaTombstone(subject, v.Version), v.Version, nil
}

// DeleteSubject is DELETE /subjects/{s}: soft (every version marked
// deleted), then (permanent) for good, with its config and mode.
func (r *Registry) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	recs, versions, err := r.planDeleteSubject(subject, permanent)
	if err != nil {
		return nil, err
	}
	return versions, r.append(ctx, recs...)
}

func (r *Registry) planDeleteSubject(subject string, permanent bool) ([]Record, []int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if err := writable(r.modeOf(subject), subject); err != nil {
		return nil, nil, err
	}
	all := r.st.versions(subject, true)
	if len(all) == 0 {
		return nil, nil, errSubjectNotFound(subject)
	}
	live := r.st.versions(subject, false)
	for _, v := range live {
		if users := r.st.referencedBy(subject, v.Version); len(users) > 0 {
			return nil, nil, errorf(codeReferenceExists, "One or more references exist to the schema {subject=%s,version=%d}", subject, v.Version)
		}
	}
	if !permanent {
		if len(live) == 0 {
			return nil, nil, errorf(codeSubjectSoftDeleted, "Subject '%s' was soft deleted. Set permanent=true to delete permanently", subject)
		}
		var nums []int
		for _, v := range live {
			nums = append(nums, v.Version)
		}
		return []Record{deleteSubjectRecord(subject, all[len(all)-1].Version)}, nums, nil
	}
	if len(live) > 0 {
		return nil, nil, errorf(codeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
	}
	var recs []Record
	var nums []int
	for _, v := range all {
		recs = append(recs, schemaTombstone(subject, v.Version))
		nums = append(nums, v.Version)
	}
	for _, set := range []*setting{compatibilitySetting, modeSetting} {
		if _, ok := r.st.settings[set.keyType][subject]; ok {
			recs = append(recs, set.record(subject, ""))
		}
	}
	return recs, nums, nil
}

// CheckCompatibility is POST /compatibility/subjects/{s}/versions/{v}
// (version 0: against the versions the subject's level names).
func (r *Registry) CheckCompatibility(ctx context.Context, subject string, version int, q *RegisterRequest, normalize bool) ([]string, error) {
	if err := r.awaitReady(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, err := r.prepare(q, normalize)
	if err != nil {
		return nil, err
	}
	previous, err := r.previousParsed(subject, q.schemaType())
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == codeIncompatible {
			return []string{e.Message}, nil
		}
		return nil, err
	}
	level := r.levelOf(subject)
	if version != 0 && version != -1 {
		v := r.versionEntry(subject, version, false)
		if v == nil {
			if len(r.st.versions(subject, false)) == 0 {
				return nil, errSubjectNotFound(subject)
			}
			return nil, errVersionNotFound(subject, version)
		}
		old, err := r.parse(v.SchemaType, v.Schema, v.References)
		if err != nil {
			return nil, errorf(codeStoreError, "version %d of subject %s no longer parses: %v", v.Version, subject, err)
		}
		previous = []parsedSchema{old}
		switch level {
		case levelBackwardTransitive:
			level = levelBackward
		case levelForwardTransitive:
			level = levelForward
		case levelFullTransitive:
			level = levelFull
		}
	}
	problems := compatibilityProblems(level, p.parsed, previous)
	if problems == nil {
		problems = []string{}
	}
	return problems, nil
}

// Setting is GET /config(/{s}) and /mode(/{s}): the subject's own value
// ("" is the global one); fallback answers with the effective value when
// the subject has none of its own.
func (r *Registry) Setting(ctx context.Context, set *setting, subject string, fallback bool) (string, error) {
	if err := r.awaitReady(ctx); err != nil {
		return "", err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if v, ok := r.st.settings[set.keyType][subject]; ok {
		return v, nil
	}
	if subject == "" || fallback {
		return r.st.effective(set, subject), nil
	}
	return "", errorf(set.notSetCode, "Subject '%s' does not have subject-level %s configured", subject, set.what)
}

// SetSetting is PUT /config(/{s}) and /mode(/{s}); an empty value is
// DELETE, which answers with the value that was in effect. IMPORT mode
// needs an empty registry (or subject) unless force is set, as
// Confluent's does.
func (r *Registry) SetSetting(ctx context.Context, set *setting, subject, value string, force bool) (string, error) {
	if err := r.awaitReady(ctx); err != nil {
		return "", err
	}
	if value != "" && !set.isValid(value) {
		return "", set.invalid
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.RLock()
	old := r.st.effective(set, subject)
	_, had := r.st.settings[set.keyType][subject]
	exists := len(r.st.subjectNames(true)) > 0
	if subject != "" {
		exists = len(r.st.versions(subject, true)) > 0
	}
	r.mu.RUnlock()
	if value == "" && subject != "" && !had && !exists {
		return "", errSubjectNotFound(subject)
	}
	if set == modeSetting && value == modeImport && exists && !force {
		return "", errorf(codeOperationNotPermitted, "Cannot import since found existing subjects")
	}
	if err := r.append(ctx, set.record(subject, value)); err != nil {
		return "", err
	}
	if value == "" {
		return old, nil
	}
	return value, nil
}
