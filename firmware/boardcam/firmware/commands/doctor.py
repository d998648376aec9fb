"""``boardcam doctor [--json]``: check the camera, GPIO, display, files and service.

Exit status 0 when nothing is broken (warnings allowed), 1 when something
must be fixed before the referee can run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "doctor",
        help="check camera, GPIO, display, calibration, config, disk and service",
        description=(
            "Check this installation and print a fix for every problem. Exit status 1 "
            "when something is broken. Run with sudo to check the service's own files."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--config", type=Path, help="config file to check (default: the app's)")
    parser.add_argument("--state-dir", type=Path,
                        help="state directory to check (default: the service's when installed)")
    parser.add_argument("--no-camera", action="store_true",
                        help="do not open the camera (e.g. while another program uses it)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from boardcam.firmware.doctor import format_report, run_doctor

    report = run_doctor(config=args.config, state_dir=args.state_dir,
                        camera=not args.no_camera)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_report(report))
    return report.exit_code
