package flower

import (
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// Names of what the add-on runs, on the hub and on the clusters (OCM's flower-addon's).
const (
	// AddonName is the add-on's name: its ClusterManagementAddOn's and ManagedClusterAddOns'.
	AddonName = "flower-addon"
	// Namespace holds, on the hub, the SuperLink, its certificates and the add-on's default
	// AddOnDeploymentConfig.
	Namespace = builtinaddon.FlowerNamespace
	// SuperLinkName names the SuperLink's Deployment and Service.
	SuperLinkName = "superlink"
	// CASecret holds the CA (ca.crt, ca.key); ServingSecret the SuperLink's serving certificate
	// (tls.crt, tls.key, ca.crt). Both in Namespace, on the hub only.
	CASecret      = "flower-ca"
	ServingSecret = "superlink-tls"
	// CAConfigMap holds the CA certificate (ca.crt), in Namespace on the hub and in
	// SuperNodeNamespace on each cluster.
	CAConfigMap = "flower-ca"
	// SuperNodeNamespace and SuperNodeName are the SuperNode's namespace, Deployment and Service
	// on each cluster.
	SuperNodeNamespace = "flower-addon"
	SuperNodeName      = "flower-supernode"
)

// Ports (Flower's defaults). The SuperLink's Service has the first three, the SuperNode's the last.
const (
	// PortServerAppIo is the SuperLink's ServerAppIo API, where ServerApps connect.
	PortServerAppIo = 9091
	// PortFleet is the Fleet API, where SuperNodes connect.
	PortFleet = 9092
	// PortControl is the Control API, where `flwr run` connects.
	PortControl = 9093
	// PortClientAppIo is the SuperNode's ClientAppIo API, where ClientApps connect.
	PortClientAppIo = 9094
)

// The AddOnDeploymentConfig's variables (OCM's names).
const (
	// VarAddress is the SuperLink's host as the clusters reach it: a DNS name or an IP address
	// (an IPv6 address in brackets).
	VarAddress = "SUPERLINK_ADDRESS"
	// VarPort is the Fleet API's port there.
	VarPort = "SUPERLINK_PORT"
	// VarImage is the SuperNode's image.
	VarImage = "IMAGE"
)

// ConditionSuperLink is the ManagedClusterAddOn condition that says whether the hub's side of
// the add-on (the SuperLink and what it needs) is ready, and if not, what is in the way.
const ConditionSuperLink = "SuperLinkReady"

// Reasons of ConditionSuperLink.
const (
	ReasonAvailable   = "SuperLinkAvailable"
	ReasonUnavailable = "SuperLinkUnavailable"
	// ReasonConflict: an object the hub would write exists and is not Flotilla's.
	ReasonConflict = "SuperLinkConflict"
	// ReasonFailed: the API server refused a write or a read (the message says what to grant).
	ReasonFailed = "SuperLinkFailed"
)

// ownerLabels are the labels of everything the hub writes for the add-on.
func ownerLabels() map[string]string {
	return map[string]string{builtinaddon.Label: AddonName, wellknown.PartOfLabel: wellknown.PartOf}
}

// owned says whether the hub made obj (its label).
func owned(labels map[string]string) bool { return labels[builtinaddon.Label] == AddonName }
