package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
)

func (r *root) planCommand() *cobra.Command {
	return &cobra.Command{
		Use: "plan [-n NS] [RUNTIME...] --gardener-kubeconfig FILE [--config FILE] [manager flags]\n" +
			"  plan -f RUNTIME.yaml [--shoot SHOOT.yaml] [--config FILE] [manager flags]\n" +
			"  plan --from-shadow FILE|URL",
		Short: "Print what the manager would change on each Runtime's shoot now, per field, and a summary",
		Long: "For each Runtime, what the manager's ApplyShoot step would write to its shoot now: nothing, a create, a\n" +
			"take-over (a merge patch of labels and annotations only) or an apply, with every value it changes (path, the\n" +
			"shoot's value, the new one); then a summary: runtimes unchanged, runtimes with changes, changes by field.\n" +
			"The manager's own flags (--config is its --converter-config-filepath) decide the render, so start it as the\n" +
			"manager runs. Online, it reads the Runtimes of -n (default: kubectl's namespace) with your kubeconfig and their\n" +
			"shoots from the Gardener project with --gardener-kubeconfig; offline, one Runtime and its shoot from files.\n" +
			"It writes nothing. Use it before a migration from upstream's manager and before an upgrade of this one.\n" +
			"With --from-shadow it prints a shadow manager's records instead (its /shadow/writes, saved or at a URL):\n" +
			"every write the shadow would make, to the shoot and everywhere else, with the values it changes.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.plan(cmd.Context(), args)
		},
	}
}

// planInputs is one Runtime and its shoot as Gardener has it (nil: none).
type planInputs struct {
	rt    *infrav1.Runtime
	shoot *gardencorev1beta1.Shoot
}

func (r *root) plan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(r.stderr)
	file := fs.String("f", "", "offline: the Runtime manifest")
	shootFile := fs.String("shoot", "", "offline: the shoot as Gardener has it (none: the Runtime has no shoot yet)")
	gardenKubeconfig := fs.String("gardener-kubeconfig", "", "online: the kubeconfig of the Gardener project")
	kubeconfigPath := fs.String("kubeconfig", "", "online: the kubeconfig of the control plane with the Runtimes (default: kubectl's)")
	kubeContext := fs.String("context", "", "online: the kubeconfig context of the control plane")
	var namespace string
	fs.StringVar(&namespace, "n", "", "online: the namespace of the Runtimes (default: the context's)")
	fromShadow := fs.String("from-shadow", "", "a shadow manager's records: a file, or the URL of its "+shadow.HandlerPath)
	aclPath := fs.String("acl", "", "the landscape's ACL ConfigMap manifest, for runtimes that restrict their API server (with --api-server-acl-enabled)")
	opts := manager.DefaultOptions()
	fs.StringVar(&opts.ConverterConfigFilepath, "config", "", "the landscape's converter configuration file (the manager's --converter-config-filepath)")
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if *fromShadow != "" {
		return r.planFromShadow(ctx, *fromShadow, append(fs.Args(), *file, *gardenKubeconfig))
	}
	l, err := opts.Landscape()
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	renderOpts := opts.RenderOptions(l)
	var inputs []planInputs
	switch {
	case *file != "" && (*gardenKubeconfig != "" || fs.NArg() > 0):
		return errors.New("plan: -f plans one Runtime offline; name Runtimes with --gardener-kubeconfig to plan them online")
	case *file != "":
		in := planInputs{rt: &infrav1.Runtime{}}
		if err := readYAML(*file, in.rt); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if *shootFile != "" {
			in.shoot = &gardencorev1beta1.Shoot{}
			if err := readYAML(*shootFile, in.shoot); err != nil {
				return fmt.Errorf("plan: %w", err)
			}
		}
		inputs = []planInputs{in}
	case *gardenKubeconfig != "":
		cp := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfigPath, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
			&clientcmd.ConfigOverrides{CurrentContext: *kubeContext, Context: clientcmdapi.Context{Namespace: namespace}})
		if inputs, err = readPlanInputs(ctx, cp, *gardenKubeconfig, renderOpts.Namespace, fs.Args()); err != nil {
			return err
		}
	default:
		fs.Usage()
		return errors.New("plan: -f RUNTIME.yaml (offline) or --gardener-kubeconfig FILE (online) is required")
	}
	plans, err := planAll(inputs, renderOpts, aclOf(opts, *aclPath))
	if err != nil {
		return err
	}
	return printPlans(r.stdout, plans)
}

// aclOf is the ACL ConfigMap manifest at path when the manager's options restrict API servers,
// nil when they do not.
func aclOf(opts manager.Options, path string) *aclFile {
	if !opts.APIServerACLEnabled {
		return nil
	}
	return &aclFile{path: path}
}

// planAll plans the shoot of each input under renderOpts, with the ACL addresses of acl when the
// landscape restricts API servers (nil: it does not). A shoot named by more than one Runtime is
// planned for none of them: the manager gives it to one and fails the others.
func planAll(inputs []planInputs, renderOpts gardener.RenderOptions, acl *aclFile) ([]runtimePlan, error) {
	shared := sharedShoots(inputs)
	plans := make([]runtimePlan, 0, len(inputs))
	for _, in := range inputs {
		p := runtimePlan{name: in.rt.Name, shoot: in.rt.Spec.Shoot.Name}
		o := renderOpts
		if acl != nil {
			var err error
			if o.ACL, err = acl.forRuntime(in.rt); err != nil {
				return nil, fmt.Errorf("plan: %w", err)
			}
		}
		if names := shared[p.shoot]; len(names) > 1 {
			p.err = fmt.Errorf("shoot %s is named by the Runtimes %v: the manager gives it to one of them and fails the others with ShootNameTaken", p.shoot, names)
		} else {
			p.ShootPlan, p.err = runtimectrl.PlanShoot(in.rt, in.shoot, o)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// sharedShoots returns, by shoot name, the Runtimes among inputs that name it.
func sharedShoots(inputs []planInputs) map[string][]string {
	out := map[string][]string{}
	for _, in := range inputs {
		out[in.rt.Spec.Shoot.Name] = append(out[in.rt.Spec.Shoot.Name], in.rt.Name)
	}
	return out
}

// readPlanInputs reads the Runtimes names (all of the namespace when none) from the control
// plane cp and their shoots from the Gardener project gardenNamespace.
func readPlanInputs(ctx context.Context, cp clientcmd.ClientConfig, gardenKubeconfig, gardenNamespace string, names []string) ([]planInputs, error) {
	cfg, err := cp.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("plan: kubeconfig: %w", err)
	}
	ns, _, err := cp.Namespace()
	if err != nil {
		return nil, fmt.Errorf("plan: kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("plan: connect to %s: %w", cfg.Host, err)
	}
	gcfg, err := clientcmd.BuildConfigFromFlags("", gardenKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("plan: --gardener-kubeconfig: %w", err)
	}
	gardenScheme, err := manager.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	garden, err := client.New(gcfg, client.Options{Scheme: gardenScheme})
	if err != nil {
		return nil, fmt.Errorf("plan: connect to Gardener at %s: %w", gcfg.Host, err)
	}
	runtimes, err := (&cluster{client: c, namespace: ns}).runtimesNamed(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	// One list of the project's shoots instead of a read per Runtime.
	shoots := &gardencorev1beta1.ShootList{}
	if err := garden.List(ctx, shoots, client.InNamespace(gardenNamespace)); err != nil {
		return nil, fmt.Errorf("plan: list shoots in %s: %w", gardenNamespace, err)
	}
	byName := make(map[string]*gardencorev1beta1.Shoot, len(shoots.Items))
	for i := range shoots.Items {
		byName[shoots.Items[i].Name] = &shoots.Items[i]
	}
	out := make([]planInputs, 0, len(runtimes))
	for _, rt := range runtimes {
		out = append(out, planInputs{rt: rt, shoot: byName[rt.Spec.Shoot.Name]})
	}
	return out, nil
}

// runtimePlan is the plan of one Runtime's shoot, or why there is none.
type runtimePlan struct {
	name, shoot string
	runtimectrl.ShootPlan
	err error
}

// index matches a list index in a change's path, which the summary leaves out.
var index = regexp.MustCompile(`\[\d+\]`)

// printPlans prints a table of the plans, the changes of each Runtime with some, and the
// summary. It fails when a Runtime could not be planned, after printing.
func printPlans(w io.Writer, plans []runtimePlan) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tSHOOT\tWRITE\tCHANGES")
	for _, p := range plans {
		switch {
		case p.err != nil:
			fmt.Fprintf(tw, "%s\t%s\terror\t-\n", p.name, p.shoot)
		case p.Write == runtimectrl.ShootWriteCreate:
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\n", p.name, p.shoot, p.Write)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", p.name, p.shoot, p.Write, len(p.Changes))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	writes := map[runtimectrl.ShootWrite]int{}
	fields := map[string]int{}
	var failed []string
	for _, p := range plans {
		if p.err != nil {
			failed = append(failed, p.name)
			fmt.Fprintf(w, "\n%s: %v\n", p.name, p.err)
			continue
		}
		writes[p.Write]++
		if len(p.Changes) > 0 {
			fmt.Fprintf(w, "\n%s (%s of shoot %s):\n", p.name, p.Write, p.shoot)
		}
		for _, c := range p.Changes {
			fmt.Fprintf(w, "  %s: %s -> %s\n", c.Path, value(c.Old), value(c.New))
			fields[index.ReplaceAllString(c.Path, "[]")]++
		}
	}
	unchanged := writes[runtimectrl.ShootWriteNone] + writes[runtimectrl.ShootWriteSuspended]
	fmt.Fprintf(w, "\n%d runtimes: %d unchanged (%d suspended), %d with changes (%d create, %d take-over, %d apply), %d failed\n",
		len(plans), unchanged, writes[runtimectrl.ShootWriteSuspended],
		writes[runtimectrl.ShootWriteCreate]+writes[runtimectrl.ShootWriteTakeOver]+writes[runtimectrl.ShootWriteApply],
		writes[runtimectrl.ShootWriteCreate], writes[runtimectrl.ShootWriteTakeOver], writes[runtimectrl.ShootWriteApply], len(failed))
	if len(fields) > 0 {
		fmt.Fprintln(w, "changes by field:")
		for _, f := range slices.SortedFunc(maps.Keys(fields), func(a, b string) int {
			return cmp.Or(fields[b]-fields[a], strings.Compare(a, b))
		}) {
			fmt.Fprintf(w, "  %4d  %s\n", fields[f], f)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("plan: %d Runtimes could not be planned: %v", len(failed), failed)
	}
	return nil
}

// value prints a value of a change as JSON, "(none)" for a missing one.
func value(v any) string {
	if v == nil {
		return "(none)"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
