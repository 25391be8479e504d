// Command training-operator runs Kubeflow training-operator v1 controllers and their validating
// webhook for tfjob-kit's local cluster.
//
// One source, two releases: go.mod builds the pinned release (versions.toml [training-operator]
// version); upgrade-from.mod (go build -modfile=upgrade-from.mod -tags upgradefrom) builds the
// release the upgrade tests start from (upgrade_from), whose flags lack the client's QPS and
// burst (client_flags.go).
//
// It assembles the same pieces as upstream's cmd/training-operator.v1 (scheme, controllers,
// webhooks, cert rotator, readiness gate) with two things upstream hard-codes made flags,
// because the local cluster runs the operator as a host process next to other clusters:
//
//   - --webhook-host: the address the webhook server listens on (upstream: every interface);
//   - --cert-dir: where the rotator writes, and the webhook server reads, the serving
//     certificate (upstream: the machine-wide /tmp/k8s-webhook-server/serving-certs).
//
// In a real cluster the charts run upstream's image, where both are right for a pod.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	"volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	volcanoclient "volcano.sh/apis/pkg/client/clientset/versioned"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"
)

// The names upstream's pkg/cert gives the rotator's CA and the webhook configuration.
const (
	caName                   = "training-operator-ca"
	caOrganization           = "training-operator"
	webhookConfigurationName = "validator.training-operator.kubeflow.org"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
}

type options struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	schemes                controllerv1.EnabledSchemes
	gangScheduler          string
	threads                int
	webhookHost            string
	webhookPort            int
	webhookService         string
	webhookSecret          string
	certDir                string
	client                 clientFlags
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "The address the metric endpoint binds to.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Enable leader election.")
	flag.Var(&o.schemes, "enable-scheme", "Enable scheme(s), e.g. --enable-scheme=tfjob.")
	flag.StringVar(&o.gangScheduler, "gang-scheduler-name", "", "volcano, or a scheduler-plugins name; empty: no gang scheduling.")
	flag.IntVar(&o.threads, "controller-threads", 1, "Worker threads per controller.")
	flag.StringVar(&o.webhookHost, "webhook-host", "127.0.0.1", "The address the webhook server listens on.")
	flag.IntVar(&o.webhookPort, "webhook-server-port", 9443, "The webhook server's port.")
	flag.StringVar(&o.webhookService, "webhook-service-name", "training-operator", "The webhook Service (the certificate's DNS name).")
	flag.StringVar(&o.webhookSecret, "webhook-secret-name", "training-operator-webhook-cert", "The Secret holding the CA and serving certificate.")
	flag.StringVar(&o.certDir, "cert-dir", "", "Directory for the serving certificate (required).")
	o.client.bind(flag.CommandLine)
	zapOpts := zap.Options{Development: true, StacktraceLevel: zapcore.DPanicLevel}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	// The release this binary was built from, as the Go module records it: what an upgrade
	// of the local cluster checks.
	setupLog.Info("starting training-operator", "version", operatorVersion())
	if err := run(o); err != nil {
		setupLog.Error(err, "training-operator failed")
		os.Exit(1)
	}
}

// operatorVersion is the version of the training-operator module linked into this binary.
func operatorVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/kubeflow/training-operator" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func run(o options) error {
	if o.certDir == "" {
		return errors.New("--cert-dir is required")
	}
	namespace := os.Getenv("MY_POD_NAMESPACE")
	if namespace == "" {
		namespace = "kubeflow"
	}
	cfg := ctrl.GetConfigOrDie()
	o.client.apply(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		WebhookServer:          webhook.NewServer(webhook.Options{Host: o.webhookHost, Port: o.webhookPort, CertDir: o.certDir}),
		HealthProbeBindAddress: o.probeAddr,
		LeaderElection:         o.leaderElect,
		LeaderElectionID:       "1ca428e5.training-operator.kubeflow.org",
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	certsReady := make(chan struct{})
	err = rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: namespace, Name: o.webhookSecret},
		CertDir:        o.certDir,
		CAName:         caName,
		CAOrganization: caOrganization,
		DNSName:        fmt.Sprintf("%s.%s.svc", o.webhookService, namespace),
		IsReady:        certsReady,
		Webhooks:       []rotator.WebhookInfo{{Type: rotator.Validating, Name: webhookConfigurationName}},
	})
	if err != nil {
		return fmt.Errorf("cert rotator: %w", err)
	}
	// Ready once the controllers and their webhook handlers are registered (which waits for
	// the certificates) and the webhook server listens. Upstream's check stops at the
	// certificates, so it can pass while the handlers are still being registered, and the
	// API server's first calls then get 404 from a listening webhook server.
	hooksReady := make(chan struct{})
	err = mgr.AddHealthzCheck("healthz", healthz.Ping)
	if err == nil {
		err = mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
			select {
			case <-hooksReady:
				return mgr.GetWebhookServer().StartedChecker()(req)
			default:
				return errors.New("certificates or webhook handlers are not ready")
			}
		})
	}
	if err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	go func() {
		setupControllers(mgr, o, certsReady)
		close(hooksReady)
	}()
	return mgr.Start(ctrl.SetupSignalHandler())
}

func setupControllers(mgr ctrl.Manager, o options, certsReady <-chan struct{}) {
	<-certsReady
	setup := common.GenNonGangSchedulerSetupFunc()
	switch {
	case strings.EqualFold(o.gangScheduler, string(common.GangSchedulerVolcano)):
		setup = common.GenVolcanoSetupFunc(volcanoclient.NewForConfigOrDie(mgr.GetConfig()))
		requireCRD(mgr, v1beta1.SchemeGroupVersion.WithKind("PodGroup").GroupKind(), v1beta1.SchemeGroupVersion.Version)
	case o.gangScheduler != "":
		setup = common.GenSchedulerPluginsSetupFunc(mgr.GetClient(), o.gangScheduler)
		gv := schedulerpluginsv1alpha1.SchemeGroupVersion
		requireCRD(mgr, gv.WithKind("PodGroup").GroupKind(), gv.Version)
	}
	schemes := o.schemes
	if schemes.Empty() {
		schemes.FillAll()
	}
	for _, s := range schemes {
		reconciler, ok := controllerv1.SupportedSchemeReconciler[s]
		hook, hookOK := webhooks.SupportedSchemeWebhook[s]
		if !ok || !hookOK {
			fatal(fmt.Errorf("scheme %q is not supported", s))
		}
		if err := reconciler(mgr, setup, o.threads); err != nil {
			fatal(fmt.Errorf("controller for %s: %w", s, err))
		}
		if err := hook(mgr); err != nil {
			fatal(fmt.Errorf("webhook for %s: %w", s, err))
		}
	}
}

func requireCRD(mgr ctrl.Manager, gk schema.GroupKind, version string) {
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, version); err != nil {
		if meta.IsNoMatchError(err) {
			fatal(fmt.Errorf("CRD for %s/%s is missing, install it first: %w", gk.Group, gk.Kind, err))
		}
		fatal(err)
	}
}

func fatal(err error) {
	setupLog.Error(err, "setting up controllers failed")
	os.Exit(1)
}
