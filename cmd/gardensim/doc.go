// Command gardensim plays Gardener for Infrastructure Manager in local runs,
// tests and benchmarks: see package gardensim for what it simulates and
// gardensim --help for its flags, scenarios and admin API.
package main
