package quota

import "testing"

// Kafka's precedence: the most specific entity that sets the key wins,
// and <default> parts become the request's own names in the rate key.
func TestResolvePrecedence(t *testing.T) {
	all := Configs{
		{User: Named("alice"), Client: Named("app")}:  {KeyProducerByteRate: 1},
		{User: Named("alice"), Client: DefaultPart()}: {KeyProducerByteRate: 2},
		{User: Named("alice")}:                        {KeyProducerByteRate: 3, KeyConsumerByteRate: 30},
		{User: DefaultPart(), Client: Named("app")}:   {KeyProducerByteRate: 4},
		{User: DefaultPart(), Client: DefaultPart()}:  {KeyProducerByteRate: 5},
		{User: DefaultPart()}:                         {KeyProducerByteRate: 6},
		{Client: Named("tool")}:                       {KeyProducerByteRate: 7},
		{Client: DefaultPart()}:                       {KeyProducerByteRate: 8, KeyRequestPercentage: 80},
	}
	cases := []struct {
		key, user, client string
		want              float64
		rateKey           Entity
	}{
		{KeyProducerByteRate, "alice", "app", 1, Entity{User: Named("alice"), Client: Named("app")}},
		{KeyProducerByteRate, "alice", "x", 2, Entity{User: Named("alice"), Client: Named("x")}},
		{KeyConsumerByteRate, "alice", "x", 30, Entity{User: Named("alice")}},
		{KeyProducerByteRate, "bob", "app", 4, Entity{User: Named("bob"), Client: Named("app")}},
		{KeyProducerByteRate, "bob", "x", 5, Entity{User: Named("bob"), Client: Named("x")}},
		{KeyRequestPercentage, "bob", "x", 80, Entity{Client: Named("x")}},
	}
	for _, c := range cases {
		k, v, ok := resolve(all, c.key, c.user, c.client)
		if !ok || v != c.want || k != c.rateKey {
			t.Errorf("resolve(%s, %s, %s) = %v %v %v, want %v %v", c.key, c.user, c.client, k, v, ok, c.rateKey, c.want)
		}
	}
	delete(all, Entity{User: DefaultPart(), Client: DefaultPart()})
	delete(all, Entity{User: DefaultPart()})
	if _, v, _ := resolve(all, KeyProducerByteRate, "bob", "tool"); v != 7 {
		t.Errorf("client-id tool: %v, want 7", v)
	}
	if _, v, _ := resolve(all, KeyProducerByteRate, "bob", "other"); v != 8 {
		t.Errorf("client-id default: %v, want 8", v)
	}
	if _, _, ok := resolve(Configs{}, KeyProducerByteRate, "bob", "x"); ok {
		t.Error("no configs resolved a quota")
	}
}
