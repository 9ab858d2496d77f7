// Package fault injects the failures a client of the Gardener API can meet:
// error statuses with real metav1.Status bodies (500, 503, 429 with
// Retry-After, 403, 409, ...), added latency, dropped connections, malformed
// bodies, replies of the wrong kind and shoots without status. Rules select
// requests by verb, resource, namespace and name (glob patterns), fire with a
// probability or for the first N hits, and can be bounded in time; an
// Injector holds the rules, which may be replaced at any time, and Handler
// wraps the real API behind the front proxy so that the fault decorates the
// real reply instead of replacing the API with a fake.
package fault
