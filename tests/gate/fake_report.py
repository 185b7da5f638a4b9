"""Fake harness reports for the gate's and the targets' tests."""
import copy


def changed(report, overrides):
    """A copy of `report` with each of `overrides` set: {"write.rate_per_s": 100.0} sets
    report["write"]["rate_per_s"]."""
    report = copy.deepcopy(report)
    for path, value in overrides.items():
        target = report
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return report
