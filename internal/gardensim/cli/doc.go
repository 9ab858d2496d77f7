// Package cli is the gardensim command: it turns flags into simulator
// options, starts the simulator, writes the garden kubeconfig for the
// manager, and runs until its context ends (SIGINT or SIGTERM in the
// command), then stops every process it started. Run is exported so that
// the local environment can start the very same command in-process.
package cli
