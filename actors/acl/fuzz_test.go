package acl

import "testing"

// FuzzBindings builds bindings and filters from arbitrary codes and
// names, creates, describes, authorizes and deletes with them: invalid
// ones are refused with errors, valid ones round-trip, nothing panics.
func FuzzBindings(f *testing.F) {
	f.Add(int8(2), int8(3), int8(3), int8(3), "t", "User:a", "*", "t")
	f.Add(int8(4), int8(4), int8(2), int8(2), "kafka-cluster", "User:*", "1.2.3.4", "")
	f.Add(int8(-1), int8(99), int8(0), int8(1), "", ":", "", "x")
	f.Fuzz(func(t *testing.T, typ, pattern, op, perm int8, name, principal, host, query string) {
		a, err := New(Rules{}, &MemStore{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := Binding{Resource: Resource{Type: ResourceType(typ), Name: name, Pattern: PatternType(pattern)},
			Entry: Entry{Principal: principal, Host: host, Op: Operation(op), Perm: Permission(perm)}}
		errs := a.Create([]Binding{b})
		if (errs[0] == nil) != (b.Validate() == nil) {
			t.Fatalf("Create and Validate disagree on %+v: %v", b, errs[0])
		}
		a.Authorize(principal, host+":1", Operation(op), ResourceType(typ), query)
		filter := Filter{Type: ResourceType(typ), Name: &name, Pattern: PatternType(pattern), Op: Operation(op), Perm: Permission(perm)}
		matched, derrs := a.Delete([]Filter{filter})
		if derrs[0] != nil && len(matched[0]) > 0 {
			t.Fatal("a refused filter matched")
		}
		if errs[0] == nil && derrs[0] == nil && len(matched[0]) != 1 {
			t.Fatalf("the exact filter of a created binding matched %v", matched[0])
		}
	})
}
