package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/config/crd"
)

// FieldManager owns the fields Flotilla applies.
const FieldManager = "flotilla"

// Options configures CRDs.
type Options struct {
	// DryRun reports what would change and changes nothing.
	DryRun bool
	// Out receives one line per CRD; nil discards them.
	Out io.Writer
	// Timeout bounds the wait for the CRDs to be Established; 60 s when zero.
	Timeout time.Duration
}

// Result says what happened to one CRD.
type Result string

// Results of applying a CRD; the dry-run ones start with "would".
const (
	Created         Result = "created"
	Configured      Result = "configured"
	Unchanged       Result = "unchanged"
	WouldCreate     Result = "would be created"
	WouldConfigure  Result = "would be configured"
	UnchangedDryRun Result = "unchanged (dry run)"
)

// CRDs applies crds to the cluster cfg points at and waits until they are served. It returns
// what happened to each, by name.
func CRDs(ctx context.Context, cfg *rest.Config, crds []*apiextv1.CustomResourceDefinition, opts Options) (map[string]Result, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		// client-go's default of 5 requests a second would throttle a parallel install of ~20 CRDs.
		cfg.QPS, cfg.Burst = 50, 100
	}
	cs, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client := cs.ApiextensionsV1().CustomResourceDefinitions()
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	// One at a time, the API server takes about half a second to answer each apply of a large
	// CRD, most of it waiting rather than working; in parallel all of ours take under a second.
	applied := make([]Result, len(crds))
	migrated := make([]int, len(crds))
	errs := make([]error, len(crds))
	var wg sync.WaitGroup
	for i, crd := range crds {
		wg.Go(func() {
			applied[i], errs[i] = applyOne(ctx, client, crd, opts.DryRun)
			if errs[i] == nil && !opts.DryRun {
				errs[i] = waitEstablished(ctx, client, crd.Name, timeout)
			}
			if errs[i] == nil && !opts.DryRun {
				// An upgrade may have changed the storage version: move the objects to it.
				migrated[i], errs[i] = MigrateStorage(ctx, cfg, crd.Name)
			}
		})
	}
	wg.Wait()
	results := map[string]Result{}
	for i, crd := range crds {
		if applied[i] == "" {
			continue
		}
		results[crd.Name] = applied[i]
		if opts.Out != nil {
			_, _ = fmt.Fprintf(opts.Out, "customresourcedefinition/%s %s\n", crd.Name, applied[i])
			if migrated[i] > 0 {
				_, _ = fmt.Fprintf(opts.Out, "customresourcedefinition/%s: %d objects moved to storage version %s\n", crd.Name, migrated[i], storageVersion(crd))
			}
		}
	}
	return results, errors.Join(errs...)
}

// Embedded applies the CRDs embedded in this binary (config/crd) with CRDs.
func Embedded(ctx context.Context, cfg *rest.Config, opts Options) (map[string]Result, error) {
	crds, err := crd.All()
	if err != nil {
		return nil, err
	}
	return CRDs(ctx, cfg, crds, opts)
}

type crdClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextv1.CustomResourceDefinition, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*apiextv1.CustomResourceDefinition, error)
}

func applyOne(ctx context.Context, client crdClient, crd *apiextv1.CustomResourceDefinition, dryRun bool) (Result, error) {
	existing, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return "", fmt.Errorf("reading CRD %s: %w", crd.Name, err)
	}
	body := crd.DeepCopy()
	body.APIVersion, body.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	body.Status = apiextv1.CustomResourceDefinitionStatus{}
	keepConversionClient(body, existing)
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	po := metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)}
	if dryRun {
		po.DryRun = []string{metav1.DryRunAll}
	}
	applied, err := client.Patch(ctx, crd.Name, types.ApplyPatchType, data, po)
	if err != nil {
		return "", fmt.Errorf("applying CRD %s: %w", crd.Name, err)
	}
	switch {
	case existing == nil && dryRun:
		return WouldCreate, nil
	case existing == nil:
		return Created, nil
	case equality.Semantic.DeepEqual(existing.Spec, applied.Spec) && equality.Semantic.DeepEqual(existing.Labels, applied.Labels):
		if dryRun {
			return UnchangedDryRun, nil
		}
		return Unchanged, nil
	case dryRun:
		return WouldConfigure, nil
	default:
		return Configured, nil
	}
}

// keepConversionClient keeps the cluster's conversion webhook client config in body: where the
// add-on CRDs' conversion webhook is, the running hub says (internal/hub/webhook writes its URL or
// its Service and CA), not the embedded CRD, whose config is a placeholder. A forced apply of the
// placeholder url beside the hub's service would be refused ("exactly one of url or service"),
// and would point conversion away from the hub.
func keepConversionClient(body, existing *apiextv1.CustomResourceDefinition) {
	if existing == nil || existing.Spec.Conversion == nil || existing.Spec.Conversion.Webhook == nil ||
		existing.Spec.Conversion.Webhook.ClientConfig == nil ||
		body.Spec.Conversion == nil || body.Spec.Conversion.Webhook == nil {
		return
	}
	body.Spec.Conversion.Webhook.ClientConfig = existing.Spec.Conversion.Webhook.ClientConfig.DeepCopy()
}

func waitEstablished(ctx context.Context, client crdClient, name string, timeout time.Duration) error {
	var last *apiextv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		crd, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = crd
		return Served(crd), nil
	})
	if err == nil {
		return nil
	}
	why := "no status yet"
	if last != nil {
		why = fmt.Sprintf("conditions %v", last.Status.Conditions)
	}
	return fmt.Errorf("CRD %s was not Established within %s (%s)", name, timeout, why)
}

// Served reports whether the API server serves crd's kind: Established, its names accepted.
func Served(crd *apiextv1.CustomResourceDefinition) bool {
	return condition(crd, apiextv1.Established) && condition(crd, apiextv1.NamesAccepted)
}

func condition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextv1.ConditionTrue
		}
	}
	return false
}

// ReadCRDs reads the CRDs of the files in dir that match pattern (a filepath.Match glob):
// another project's CRDs, from the folder its build left them in.
func ReadCRDs(dir, pattern string) ([]*apiextv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs (%s) in %s (%v)", pattern, dir, err)
	}
	var crds []*apiextv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := crd.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		crds = append(crds, c)
	}
	return crds, nil
}
