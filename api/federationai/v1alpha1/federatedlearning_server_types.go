package v1alpha1

// ServerSpec is the aggregator of a training job, run on the hub.
//
// +kubebuilder:validation:XValidation:rule="!has(self.superlinkInsecure) || !self.superlinkInsecure || (has(self.superlink) && !(self.superlink.split(':')[0] in ['superlink.flower-system', 'superlink.flower-system.svc', 'superlink.flower-system.svc.cluster.local']))",fieldPath=".superlinkInsecure",message="superlinkInsecure applies only to a SuperLink other than flower-addon's (superlink.flower-system), whose TLS the hub's --flower-tls decides: remove superlinkInsecure, or set superlink to your own SuperLink"
type ServerSpec struct {
	// Image is the server's container image.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// Rounds is how many training rounds to run, at least 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Rounds int32 `json:"rounds,omitempty"`

	// MinAvailableClients is how many clients must be connected before a round starts, at least 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinAvailableClients int32 `json:"minAvailableClients,omitempty"`

	// Listeners expose the server to the clients on the other clusters; names must be unique.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(l, !has(l.name) || self.exists_one(m, has(m.name) && m.name == l.name))",message="listeners must have unique names: rename or remove the duplicate"
	Listeners []ListenerSpec `json:"listeners,omitempty"`

	// Storage is where the server keeps the model.
	// +optional
	Storage ModelStorageSpec `json:"storage,omitempty"`

	// SuperLink is the endpoint of the Flower SuperLink Exec API already running on the hub, as
	// <service>.<namespace>:<port> (default superlink.flower-system:9091).
	// +optional
	// +kubebuilder:default="superlink.flower-system:9091"
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}$`
	SuperLink string `json:"superlink,omitempty"`

	// SuperLinkInsecure lets the hub and the ServerApp reach a SuperLink other than flower-addon's
	// without TLS, as OCM's controller always does (Flotilla's). By default such a SuperLink must
	// serve TLS with a certificate that the system's root certificates trust. flower-addon's
	// SuperLink serves TLS as the hub's --flower-tls says.
	// +optional
	SuperLinkInsecure bool `json:"superlinkInsecure,omitempty"`
}

// ListenerType is how a server listener is exposed.
//
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="self in ['LoadBalancer', 'NodePort', 'Route']",message="listener type must be LoadBalancer, NodePort or Route"
type ListenerType string

const (
	// ListenerTypeLoadBalancer exposes the server through a Service of type LoadBalancer.
	ListenerTypeLoadBalancer ListenerType = "LoadBalancer"
	// ListenerTypeNodePort exposes the server through a Service of type NodePort.
	ListenerTypeNodePort ListenerType = "NodePort"
	// ListenerTypeRoute exposes the server through an OpenShift Route.
	ListenerTypeRoute ListenerType = "Route"
)

// ListenerSpec is one way the clients reach the server.
//
// +kubebuilder:validation:XValidation:rule="!has(self.ip) || (has(self.type) && self.type == 'NodePort')",fieldPath=".ip",message="ip applies only to listeners of type NodePort: remove ip, or set type to NodePort"
type ListenerSpec struct {
	// Name names the listener (and its Service port).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// Port is the port the server listens on (default 8080).
	// +optional
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// Type is LoadBalancer, NodePort or Route.
	// +optional
	Type ListenerType `json:"type,omitempty"`

	// IP is the node IP address clients use for a NodePort listener; only for type NodePort.
	// +optional
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="ip must be an IPv4 or IPv6 address such as 192.0.2.10"
	IP string `json:"ip,omitempty"`
}

// StorageType is where a model is stored.
//
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self in ['PersistentVolumeClaim', 'HostPath', 'S3Bucket']",message="storage type must be PersistentVolumeClaim, HostPath or S3Bucket"
type StorageType string

const (
	// StorageTypePersistentVolumeClaim stores the model on the PersistentVolumeClaim named by
	// name, mounted at path.
	StorageTypePersistentVolumeClaim StorageType = "PersistentVolumeClaim"
	// StorageTypeHostPath stores the model in the hub node's directory path.
	StorageTypeHostPath StorageType = "HostPath"
	// StorageTypeS3Bucket stores the model in the S3 bucket described by s3.
	StorageTypeS3Bucket StorageType = "S3Bucket"
)

// ModelStorageSpec is where the server keeps the model between rounds and after training.
//
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'PersistentVolumeClaim' || (has(self.name) && size(self.name) > 0)",fieldPath=".name",reason=FieldValueRequired,message="storage type PersistentVolumeClaim needs name, the claim's name: set name"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'HostPath' || (has(self.path) && size(self.path) > 0)",fieldPath=".path",reason=FieldValueRequired,message="storage type HostPath needs path, the directory on the node: set path"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'S3Bucket' || has(self.s3)",fieldPath=".s3",reason=FieldValueRequired,message="storage type S3Bucket needs s3 (at least bucketName): set s3"
type ModelStorageSpec struct {
	// Type is PersistentVolumeClaim, HostPath or S3Bucket.
	// +optional
	Type StorageType `json:"type,omitempty"`

	// Name is the PersistentVolumeClaim's name, for type PersistentVolumeClaim.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// Path is where the model is kept: the mount path of the claim, or the node directory for
	// HostPath.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Path string `json:"path,omitempty"`

	// Size is the storage to request for a PersistentVolumeClaim, as a quantity such as 2Gi.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(self)",message="size must be a quantity such as 2Gi or 500Mi"
	Size string `json:"size,omitempty"`

	// S3 is the bucket, for type S3Bucket.
	// +optional
	S3 *S3StorageSpec `json:"s3,omitempty"`
}

// S3StorageSpec is an S3 bucket (or a prefix in it) holding models.
type S3StorageSpec struct {
	// BucketName is the bucket's name.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	BucketName string `json:"bucketName"`

	// Prefix is the folder inside the bucket to use, for example models/resnet/.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`

	// Region is the AWS region of the bucket, for example us-east-1.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region,omitempty"`
}
