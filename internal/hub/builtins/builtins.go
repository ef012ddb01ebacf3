package builtins

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Installer creates the built-in add-ons' ClusterManagementAddOns.
type Installer struct {
	Client client.Client
}

var (
	_ manager.Runnable               = (*Installer)(nil)
	_ manager.LeaderElectionRunnable = (*Installer)(nil)
)

// startBackoff rides out an API server that is still starting.
var startBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second}

// SetupWithManager adds the runnable to the manager.
func (i *Installer) SetupWithManager(mgr ctrl.Manager) error { return mgr.Add(i) }

// NeedLeaderElection makes only the leader write.
func (i *Installer) NeedLeaderElection() bool { return true }

// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons,verbs=get;create

// Start creates the missing ClusterManagementAddOns once and returns.
func (i *Installer) Start(ctx context.Context) error {
	for _, info := range builtinaddon.Catalog {
		want := Desired(info)
		err := retry.OnError(startBackoff, func(error) bool { return ctx.Err() == nil }, func() error { return i.ensure(ctx, want) })
		if err != nil {
			return fmt.Errorf("creating ClusterManagementAddOn %s of the built-in add-on: %w", info.Name, err)
		}
	}
	return nil
}

// Desired is the ClusterManagementAddOn the hub creates for a built-in add-on.
func Desired(info builtinaddon.Info) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: info.Name, Labels: map[string]string{builtinaddon.Label: info.Name}},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			AddOnMeta:        addonv1alpha1.AddOnMeta{DisplayName: info.DisplayName, Description: info.Description},
			InstallStrategy:  addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
			SupportedConfigs: slices.Clone(info.Configs),
		},
	}
}

func (i *Installer) ensure(ctx context.Context, want *addonv1alpha1.ClusterManagementAddOn) error {
	log := ctrl.LoggerFrom(ctx).WithValues("addon", want.Name)
	got := &addonv1alpha1.ClusterManagementAddOn{}
	err := i.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := i.Client.Create(ctx, want.DeepCopy()); err != nil {
			return err // AlreadyExists included: the retry then reads it
		}
		log.Info("created the ClusterManagementAddOn of a built-in add-on")
		return nil
	}
	if err != nil {
		return err
	}
	if got.Labels[builtinaddon.Label] != want.Name {
		log.Info("a ClusterManagementAddOn named after a built-in add-on exists and was not made by the hub; leaving it as it is",
			"label", builtinaddon.Label)
	}
	return nil
}
