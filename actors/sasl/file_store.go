package sasl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/samsa-io/samsa/segment/vfs"
)

// CredentialsFile is where a single-node broker keeps its SCRAM
// credentials, in its first data directory.
const CredentialsFile = "samsa-scram-credentials.json"

// credentialsFile is the file's JSON: per user, per mechanism, Kafka's
// credential string (the same text ZooKeeper holds in a cluster).
type credentialsFile struct {
	Version int                          `json:"version"`
	Users   map[string]map[string]string `json:"users"`
}

// LoadFile reads the credentials a single-node broker persisted in dir
// (none yet: empty).
func LoadFile(fsys vfs.FS, dir string) (Users, error) {
	name := filepath.Join(dir, CredentialsFile)
	b, err := vfs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return Users{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sasl: reading %s: %w", name, err)
	}
	var f credentialsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("sasl: %s is not valid JSON: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("sasl: %s has version %d; this broker reads version 1", name, f.Version)
	}
	users := Users{}
	for user, creds := range f.Users {
		for mech, text := range creds {
			c, err := ParseCredential(text)
			if err != nil {
				return nil, fmt.Errorf("sasl: %s, user %q, %s: %w", name, user, mech, err)
			}
			if users[user] == nil {
				users[user] = map[string]Credential{}
			}
			users[user][mech] = c
		}
	}
	return users, nil
}

// FilePersist persists every change by rewriting dir's credentials file
// atomically (temporary file, fsync, rename, directory fsync).
func FilePersist(fsys vfs.FS, dir string) Persist {
	name := filepath.Join(dir, CredentialsFile)
	return func(_ []string, all Users) error {
		f := credentialsFile{Version: 1, Users: map[string]map[string]string{}}
		for user, creds := range all {
			f.Users[user] = map[string]string{}
			for mech, c := range creds {
				f.Users[user][mech] = c.String()
			}
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		if err := vfs.WriteFileAtomic(fsys, name, b); err != nil {
			return fmt.Errorf("sasl: writing %s: %w", name, err)
		}
		return nil
	}
}
