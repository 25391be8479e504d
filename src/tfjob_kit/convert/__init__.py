"""Conversions to kubeflow.org/v1 TFJobs, and from TFJobs to Volcano Jobs.

* legacy TFJobs (kubeflow.org/v1alpha1 list form, v1alpha2, v1beta1, v1beta2) -> v1;
* T9k TensorFlowTrainingJob (batch.tensorstack.dev/v1beta1) -> v1;
* v1 TFJob -> Volcano batch.volcano.sh/v1alpha1 Job whose containers build TF_CONFIG from the
  host files of Volcano's svc plugin (as in the Volcano TensorFlow example);
* v1 TFJob -> Kubeflow Trainer v2 TrainJob and the TrainingRuntime of its own it runs on, each
  pod's TF_CONFIG an env value.

Nothing is dropped silently: every field that cannot be carried over, and every change of meaning,
is returned as a :class:`Note` with the JSON path of the input it concerns.

The modules, one job each:

* :mod:`.notes`: Note and ConversionError, what every conversion returns beside its result and
  raises when it cannot convert;
* :mod:`.v1`: into a kubeflow.org/v1 TFJob (:func:`legacy_to_v1`, :func:`t9k_to_v1`, and
  :func:`to_v1`, which picks between them);
* :mod:`.volcano`: from a TFJob to a Volcano Job (:func:`to_volcano`);
* :mod:`.trainjob`: from a TFJob to a TrainJob and its TrainingRuntime (:func:`to_trainjob`).
"""

from tfjob_kit.convert.notes import ConversionError, Note
from tfjob_kit.convert.trainjob import TRAINER_API_VERSION, to_trainjob
from tfjob_kit.convert.v1 import T9K_API_VERSION, T9K_KIND, legacy_to_v1, t9k_to_v1, to_v1
from tfjob_kit.convert.volcano import VOLCANO_API_VERSION, VOLCANO_RETRYABLE_EXIT_CODES, to_volcano

__all__ = [
    "T9K_API_VERSION",
    "T9K_KIND",
    "TRAINER_API_VERSION",
    "VOLCANO_API_VERSION",
    "VOLCANO_RETRYABLE_EXIT_CODES",
    "ConversionError",
    "Note",
    "legacy_to_v1",
    "t9k_to_v1",
    "to_trainjob",
    "to_v1",
    "to_volcano",
]
