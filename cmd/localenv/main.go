package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, stop, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "localenv:", err)
		stop()
		os.Exit(1)
	}
}
