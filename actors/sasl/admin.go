package sasl

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// The SCRAM credential APIs' rules (KIP-554), as Kafka checks them:
// per user, every operation must be valid or none is applied.

// PlanAlter checks an AlterUserScramCredentials request against the
// store: the changes to apply and the answer, whose results the caller
// sets to the persist error for the users of changes if applying fails.
func (s *Store) PlanAlter(req *kmsg.AlterUserSCRAMCredentialsRequest) ([]Change, *kmsg.AlterUserSCRAMCredentialsResponse) {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	resp.Version = req.Version
	var users []string
	failed := map[string]*kmsg.AlterUserSCRAMCredentialsResponseResult{}
	fail := func(user string, code kerr.Code, msg string) {
		if failed[user] == nil {
			failed[user] = &kmsg.AlterUserSCRAMCredentialsResponseResult{User: user, ErrorCode: code.Int16(), ErrorMessage: kmsg.StringPtr(msg)}
		}
	}
	seen := map[[2]string]bool{}
	var changes []Change
	note := func(user string, mechType int8) (string, bool) {
		if !slices.Contains(users, user) {
			users = append(users, user)
		}
		if user == "" {
			fail(user, kerr.UnacceptableCredential, "Username must not be empty")
			return "", false
		}
		mech := ScramName(mechType)
		if mech == "" {
			fail(user, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
			return "", false
		}
		key := [2]string{user, mech}
		if seen[key] {
			fail(user, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
			return "", false
		}
		seen[key] = true
		return mech, true
	}
	for _, d := range req.Deletions {
		mech, ok := note(d.Name, d.Mechanism)
		if !ok {
			continue
		}
		if _, exists := s.Lookup(d.Name, mech); !exists {
			fail(d.Name, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
			continue
		}
		changes = append(changes, Change{User: d.Name, Mechanism: mech, Delete: true})
	}
	for _, u := range req.Upsertions {
		mech, ok := note(u.Name, u.Mechanism)
		if !ok {
			continue
		}
		switch {
		case u.Iterations < minScramIter:
			fail(u.Name, kerr.UnacceptableCredential, fmt.Sprintf("Too few iterations: at least %d", minScramIter))
			continue
		case u.Iterations > maxScramIter:
			fail(u.Name, kerr.UnacceptableCredential, fmt.Sprintf("Too many iterations: at most %d", maxScramIter))
			continue
		case len(u.Salt) == 0 || len(u.SaltedPassword) == 0:
			fail(u.Name, kerr.UnacceptableCredential, "Salt and salted password must not be empty")
			continue
		}
		cred := NewCredential(mech, slices.Clone(u.Salt), u.SaltedPassword, int(u.Iterations))
		changes = append(changes, Change{User: u.Name, Mechanism: mech, Cred: cred})
	}
	changes = slices.DeleteFunc(changes, func(c Change) bool { return failed[c.User] != nil })
	for _, user := range users {
		if r := failed[user]; r != nil {
			resp.Results = append(resp.Results, *r)
			continue
		}
		resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: user})
	}
	return changes, resp
}

// Describe answers DescribeUserScramCredentials: the named users (all
// when none is named) with the mechanisms and iterations of their
// credentials, never the credentials.
func (s *Store) Describe(req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	resp.Version = req.Version
	var names []string
	if req.Users == nil {
		names = s.UserNames()
	}
	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
	}
	for _, u := range req.Users {
		switch count[u.Name] {
		case 0: // a duplicate already answered
		case 1:
			names = append(names, u.Name)
		default:
			resp.Results = append(resp.Results, kmsg.DescribeUserSCRAMCredentialsResponseResult{User: u.Name, ErrorCode: kerr.DuplicateResource.Int16(),
				ErrorMessage: kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u.Name)})
			count[u.Name] = 0
		}
	}
	for _, name := range names {
		r := kmsg.DescribeUserSCRAMCredentialsResponseResult{User: name}
		iters, ok := s.Mechanisms(name)
		if !ok {
			r.ErrorCode = kerr.ResourceNotFound.Int16()
			r.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + name)
		}
		for _, m := range ScramMechanisms {
			if it, has := iters[m]; has {
				r.CredentialInfos = append(r.CredentialInfos, kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{Mechanism: ScramType(m), Iterations: int32(it)})
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
