package quota

// candidates lists, most specific first, the entities whose config may
// hold a request's quota: Kafka's precedence order, from
// /config/users/<user>/clients/<client-id> to /config/clients/<default>.
func candidates(user, client string) [8]Entity {
	u, c, du, dc := Named(user), Named(client), DefaultPart(), DefaultPart()
	return [8]Entity{
		{User: u, Client: c},
		{User: u, Client: dc},
		{User: u},
		{User: du, Client: c},
		{User: du, Client: dc},
		{User: du},
		{Client: c},
		{Client: dc},
	}
}

// resolve finds the quota of key for a request of user and client: the
// bound and the rate key, the entity it was found on with its <default>
// parts replaced by the request's names, so every user (or client) under
// a default quota has a rate of its own. ok is false when no entity sets
// key: the request is unlimited.
func resolve(configs map[Entity]map[string]float64, key, user, client string) (rateKey Entity, bound float64, ok bool) {
	for _, e := range candidates(user, client) {
		cfg, found := configs[e]
		if !found {
			continue
		}
		v, found := cfg[key]
		if !found {
			continue
		}
		if e.User.Present {
			e.User = Named(user)
		}
		if e.Client.Present {
			e.Client = Named(client)
		}
		return e, v, true
	}
	return Entity{}, 0, false
}
