package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
)

// planFromShadow prints the records of a shadow at source; others are what else the command line
// named (Runtimes, -f, --gardener-kubeconfig), which --from-shadow takes none of.
func (r *root) planFromShadow(ctx context.Context, source string, others []string) error {
	if slices.ContainsFunc(others, func(s string) bool { return s != "" }) {
		return errors.New("plan: --from-shadow prints a shadow's records; it takes no Runtimes, -f or --gardener-kubeconfig")
	}
	recs, err := readShadowRecords(ctx, source)
	if err != nil {
		return err
	}
	return printShadowPlan(r.stdout, recs)
}

// readShadowRecords reads a shadow manager's records from a file, or from an http(s) URL (the
// manager's /shadow/writes, port-forwarded, on a manager started with --metrics-secure=false).
func readShadowRecords(ctx context.Context, source string) (shadow.Records, error) {
	var recs shadow.Records
	var body io.Reader
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
		if err != nil {
			return recs, fmt.Errorf("plan: --from-shadow: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return recs, fmt.Errorf("plan: --from-shadow: %w", err)
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return recs, fmt.Errorf("plan: --from-shadow: %s answered %s", source, resp.Status)
		}
		body = resp.Body
	} else {
		f, err := os.Open(source)
		if err != nil {
			return recs, fmt.Errorf("plan: --from-shadow: %w", err)
		}
		defer func() { _ = f.Close() }()
		body = f
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&recs); err != nil {
		return recs, fmt.Errorf("plan: --from-shadow %s: not a shadow manager's records: %w", source, err)
	}
	return recs, nil
}

// printShadowPlan prints a shadow's records: a table of the objects with planned writes, each
// write with the values it changes, and a summary by target and kind and by field. Records of
// writes that were made (a manager with --record-writes) print the same way, as writes made.
func printShadowPlan(w io.Writer, recs shadow.Records) error {
	planned := "PLANNED"
	if recs.Live {
		planned = "MADE"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CONTROLLER\tOBJECT\tWRITES %s\tCHANGES\tFAILED\n", planned)
	for _, r := range recs.Records {
		changes, failed := 0, 0
		for _, wr := range r.Writes {
			changes += len(wr.Changes)
			if wr.Error != "" || wr.Refused {
				failed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%d\t%d\t%d\n", r.Controller, r.Namespace, r.Name, len(r.Writes), changes, failed)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	byTarget := map[string]int{}
	fields := map[string]int{}
	for _, r := range recs.Records {
		fmt.Fprintf(w, "\n%s %s/%s:\n", r.Controller, r.Namespace, r.Name)
		for _, wr := range r.Writes {
			line := "  " + wr.String()
			if o := wr.Outcome(); o != "" {
				line += ": " + o
			}
			fmt.Fprintln(w, line)
			byTarget[wr.Target+" "+wr.Kind]++
			for _, c := range wr.Changes {
				fmt.Fprintf(w, "    %s: %s -> %s\n", c.Path, value(c.Old), value(c.New))
				fields[wr.Kind+" "+index.ReplaceAllString(c.Path, "[]")]++
			}
		}
	}
	fmt.Fprintf(w, "\n%d objects with writes %s; the shadow reconciled %d objects, %d of them with none\n",
		len(recs.Records), strings.ToLower(planned), recs.Reconciled, max(0, recs.Reconciled-len(recs.Records)))
	printCounts(w, "writes by target and kind:", byTarget)
	printCounts(w, "changes by field:", fields)
	return nil
}

// printCounts prints counts under a heading, the largest first; nothing when there are none.
func printCounts(w io.Writer, heading string, counts map[string]int) {
	if len(counts) == 0 {
		return
	}
	fmt.Fprintln(w, heading)
	for _, k := range slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	}) {
		fmt.Fprintf(w, "  %4d  %s\n", counts[k], k)
	}
}
