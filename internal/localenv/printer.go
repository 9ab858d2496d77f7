package localenv

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Printer writes whole lines to the terminal from several goroutines (the progress informer,
// the alert receiver, the start-up sequence) without interleaving them.
type Printer struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// NewPrinter returns a printer writing to out, stamping lines with the wall clock.
func NewPrinter(out io.Writer) *Printer { return &Printer{out: out, now: time.Now} }

// Line writes one line, prefixed with the time of day.
func (p *Printer) Line(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "%s %s\n", p.now().Format(time.TimeOnly), line)
}

// Linef formats and writes one line, prefixed with the time of day.
func (p *Printer) Linef(format string, args ...any) { p.Line(fmt.Sprintf(format, args...)) }

// Raw writes text as it is.
func (p *Printer) Raw(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, text)
}
