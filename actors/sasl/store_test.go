package sasl

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire/kerr"
)

func TestCredentialStringRoundTrip(t *testing.T) {
	c := NewCredential(ScramSHA512, []byte("salt"), []byte("salted-password"), 8192)
	s := c.String()
	back, err := ParseCredential(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != s || back.Iterations != 8192 || string(back.Salt) != "salt" {
		t.Fatalf("%q came back as %q", s, back.String())
	}
	for _, bad := range []string{"", "salt=AA==", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x", "salt=!!,stored_key=AA==,server_key=AA==,iterations=1"} {
		if _, err := ParseCredential(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestFileStorePersists(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(nil, FilePersist(vfs.OS, dir))
	cred := NewCredential(ScramSHA256, []byte("s"), []byte("p"), 4096)
	if err := s.Alter([]Change{{User: "alice", Mechanism: ScramSHA256, Cred: cred}, {User: "bob", Mechanism: ScramSHA512, Cred: cred}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Alter([]Change{{User: "bob", Mechanism: ScramSHA512, Delete: true}}); err != nil {
		t.Fatal(err)
	}
	users, err := LoadFile(vfs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users["alice"][ScramSHA256].String() != cred.String() {
		t.Fatalf("reloaded %v", users)
	}
	if none, err := LoadFile(vfs.OS, t.TempDir()); err != nil || len(none) != 0 {
		t.Fatalf("no file: %v %v", none, err)
	}
	if _, err := LoadFile(vfs.OS, filepath.Join(dir, "missing-dir")); err != nil {
		t.Fatalf("missing directory: %v", err)
	}
}

func TestAlterPersistFailureChangesNothing(t *testing.T) {
	boom := errors.New("disk full")
	s := NewStore(nil, func([]string, Users) error { return boom })
	err := s.Alter([]Change{{User: "alice", Mechanism: ScramSHA256, Cred: NewCredential(ScramSHA256, []byte("s"), []byte("p"), 4096)}})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, ok := s.Lookup("alice", ScramSHA256); ok {
		t.Fatal("a credential that was not persisted is served")
	}
}

func TestPlanAlter(t *testing.T) {
	s := NewStore(Users{"carol": {ScramSHA256: NewCredential(ScramSHA256, []byte("s"), []byte("p"), 4096)}}, nil)
	up := func(user string, mech int8, iters int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		return kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: user, Mechanism: mech, Iterations: iters, Salt: []byte("salt"), SaltedPassword: []byte("sp")}
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		up("alice", 1, 4096), up("alice", 2, 8192), // fine
		up("few", 1, 100),                      // too few iterations
		up("many", 1, 20000),                   // too many
		up("mech", 3, 4096),                    // unknown mechanism
		up("", 1, 4096),                        // no name
		up("dup", 1, 4096), up("dup", 1, 4096), // twice
	}
	req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "carol", Mechanism: 1}, {Name: "ghost", Mechanism: 1}}
	changes, resp := s.PlanAlter(req)
	want := map[string]kerr.Code{"alice": 0, "carol": 0, "few": kerr.UnacceptableCredential, "many": kerr.UnacceptableCredential,
		"mech": kerr.UnsupportedSaslMechanism, "": kerr.UnacceptableCredential, "dup": kerr.DuplicateResource, "ghost": kerr.ResourceNotFound}
	if len(resp.Results) != len(want) {
		t.Fatalf("results %+v", resp.Results)
	}
	for _, r := range resp.Results {
		if code, ok := want[r.User]; !ok || r.ErrorCode != code.Int16() {
			t.Errorf("%q: code %d, want %d", r.User, r.ErrorCode, code.Int16())
		}
	}
	if len(changes) != 3 {
		t.Fatalf("changes %+v, want alice's two and carol's deletion", changes)
	}
	if err := s.Alter(changes); err != nil {
		t.Fatal(err)
	}
	d := s.Describe(kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	if len(d.Results) != 1 || d.Results[0].User != "alice" || len(d.Results[0].CredentialInfos) != 2 || d.Results[0].CredentialInfos[1].Iterations != 8192 {
		t.Fatalf("describe all: %+v", d.Results)
	}
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	dreq.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "carol"}, {Name: "alice"}, {Name: "alice"}}
	d = s.Describe(dreq)
	codes := map[string]int16{}
	for _, r := range d.Results {
		codes[r.User] = r.ErrorCode
	}
	if len(d.Results) != 2 || codes["carol"] != kerr.ResourceNotFound.Int16() || codes["alice"] != kerr.DuplicateResource.Int16() {
		t.Fatalf("describe named: %+v", d.Results)
	}
}

func TestSanitizeUser(t *testing.T) {
	for in, want := range map[string]string{"alice": "alice", "a b": "a%20b", "a*b": "a%2Ab", "a~b": "a%7Eb", "a/b": "a%2Fb", "a.b-c_d": "a.b-c_d"} {
		if got := SanitizeUser(in); got != want {
			t.Errorf("SanitizeUser(%q) = %q, want %q", in, got, want)
		}
		if back := DesanitizeUser(SanitizeUser(in)); back != in {
			t.Errorf("DesanitizeUser(SanitizeUser(%q)) = %q", in, back)
		}
	}
}
