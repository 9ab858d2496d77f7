// Package scenario reads fault and lifecycle rules from YAML: the named
// scenarios shipped in internal/gardensim/data/scenarios (embedded, so they load by
// name from anywhere) and scenario files of one's own. A scenario only
// carries rules; applying it to a running simulator replaces that
// simulator's rules.
package scenario
