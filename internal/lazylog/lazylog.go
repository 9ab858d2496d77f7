// Package lazylog defers a logger's key and value pairs until it logs a line.
//
// A controller's worker adds the object's name and the reconcile's id to its logger, and the
// engine adds the runtime's ids and each step's name; zap encodes such pairs at once, into a
// buffer of its own for every logger made. A quiet re-check logs nothing, so at 1,000 Runtimes
// those loggers were 6% of what the process allocated (about 19 KB per re-check). Wrapped, a
// logger keeps the pairs it was given and hands them to zap only for a line that is written.
// A value is so encoded when a line is written, not when it was added: pass values, such as
// names and ids, not pointers to what may change.
package lazylog

import (
	"slices"

	"github.com/go-logr/logr"
)

// Wrap returns log with its WithValues deferred until a line is logged. The lines are the same
// as log's, caller included.
func Wrap(log logr.Logger) logr.Logger {
	sink := log.GetSink()
	if sink == nil {
		return log
	}
	if _, ok := sink.(*lazySink); ok {
		return log
	}
	// The sink was initialised for log, whose lines it gets from logr directly; this package's
	// frame comes in between, so it skips one frame more. WithCallDepth makes a new sink:
	// log's own lines stay as they were.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&lazySink{sink: sink})
}

// lazySink is a sink with pending pairs: the pairs of WithValues since the last one it passed on.
// It is never modified after it is made, so loggers derived from one another share it safely.
type lazySink struct {
	sink    logr.LogSink
	pending []any
}

var (
	_ logr.LogSink          = (*lazySink)(nil)
	_ logr.CallDepthLogSink = (*lazySink)(nil)
)

// Init does nothing: the sink below was initialised for the logger Wrap was given, and Wrap
// added this package's frame to its call depth.
func (l *lazySink) Init(logr.RuntimeInfo) {}

func (l *lazySink) Enabled(level int) bool { return l.sink.Enabled(level) }

func (l *lazySink) Info(level int, msg string, keysAndValues ...any) {
	l.withPending().Info(level, msg, keysAndValues...)
}

func (l *lazySink) Error(err error, msg string, keysAndValues ...any) {
	l.withPending().Error(err, msg, keysAndValues...)
}

// WithValues keeps the pairs for the lines to come. The new sink's slice is its own: a sibling
// logger's pairs never land in it.
func (l *lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	return &lazySink{sink: l.sink, pending: append(slices.Clip(l.pending), keysAndValues...)}
}

// WithName names the sink below at once: names are few (one per controller), and zap keeps a
// name apart from the pairs, so their order does not change the line.
func (l *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{sink: l.sink.WithName(name), pending: l.pending}
}

// WithCallDepth passes the depth on to the sink below, when it takes one.
func (l *lazySink) WithCallDepth(depth int) logr.LogSink {
	cd, ok := l.sink.(logr.CallDepthLogSink)
	if !ok {
		return l
	}
	return &lazySink{sink: cd.WithCallDepth(depth), pending: l.pending}
}

// withPending is the sink below with the pending pairs added.
func (l *lazySink) withPending() logr.LogSink {
	if len(l.pending) == 0 {
		return l.sink
	}
	return l.sink.WithValues(l.pending...)
}
