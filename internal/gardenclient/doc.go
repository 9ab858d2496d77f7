// Package gardenclient owns the connection to the Gardener project. New builds it from a
// rest.Config and Options. Every call goes through one rate limiter, a request timeout
// (watches excepted), the request counter and one circuit breaker. Their Limits, with their
// defaults and flags, are in options.go. The client reads shoots and their ConfigMaps from a
// cache of the project's namespace. A static REST mapper maps the kinds the manager uses
// without discovery. A prober probes an open circuit once its cooldown has passed. The metrics
// come from package metrics; the caller passes them in.
package gardenclient
