// Package admin is the simulator's control API: a small HTTP+JSON interface,
// meant for a separate loopback port, through which tests, demos and the
// local environment read and replace the fault rules (/rules), the
// lifecycle rules (/lifecycle-rules), load a shipped scenario
// (/scenarios/{name}), make the seeds of a region unready and ready again
// (/seeds/regions/{region}) or take an extension type's registration away
// and back (/extensions/{type}) while the simulator runs, for example to
// start and end an outage, and read the front proxy's request log
// (/requests), to correlate what reached Gardener with what the client
// believed at the time.
package admin
