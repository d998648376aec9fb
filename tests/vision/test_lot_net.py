"""The board network's plumbing: layout, convolution, marginals, input planes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from boardcam.vision import lot_net
from boardcam.vision.tiles import lot_grid


def test_board_image_is_the_inverse_of_lot_grid():
    rng = np.random.default_rng(0)
    board = rng.normal(size=(160, 128, 3)).astype(np.float32)
    assert np.array_equal(lot_net.board_image(lot_grid(board, 16)), board)


def _naive_conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int, padding: int) -> np.ndarray:
    out_c, in_c, k, _ = weight.shape
    x = np.pad(x, ((padding, padding), (padding, padding), (0, 0)))
    h, w = (x.shape[0] - k) // stride + 1, (x.shape[1] - k) // stride + 1
    out = np.zeros((h, w, out_c), np.float64)
    for i in range(h):
        for j in range(w):
            patch = x[i * stride : i * stride + k, j * stride : j * stride + k]  # (k, k, C)
            out[i, j] = np.einsum("yxc,ocyx->o", patch, weight) + bias
    return out


@pytest.mark.parametrize("k,stride,padding", [(3, 1, 1), (3, 2, 1), (4, 4, 0), (2, 2, 0), (1, 1, 0)])
def test_convolution_matches_the_definition(k: int, stride: int, padding: int):
    rng = np.random.default_rng(k * 10 + stride)
    x = rng.normal(size=(12, 8, 3)).astype(np.float32)
    weight = rng.normal(size=(5, 3, k, k)).astype(np.float32)
    bias = rng.normal(size=5).astype(np.float32)
    got = lot_net._conv(x, weight, bias, stride, padding)
    assert np.allclose(got, _naive_conv(x, weight, bias, stride, padding), atol=1e-4)


def _random_model(seed: int = 0) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    widths = [lot_net.INPUT_CHANNELS, 6, 6, 6, 6, 6, 6, 6, lot_net.OUTPUTS]
    model: dict[str, object] = {"temperature": 1.0}
    for (name, k, _s, _p), c_in, c_out in zip(lot_net.LAYERS, widths[:-1], widths[1:]):
        model[f"{name}.weight"] = rng.normal(0, 0.3, (c_out, c_in, k, k)).astype(np.float32)
        model[f"{name}.bias"] = rng.normal(0, 0.1, c_out).astype(np.float32)
    return model


def _geometry(centre: tuple[float, float, float] = (2.0, 2.5, 8.0)) -> SimpleNamespace:
    return SimpleNamespace(margin_px=16, tile_px=32, camera_centre=np.array(centre))


def test_probabilities_give_one_distribution_per_lot_in_lot_order():
    rng = np.random.default_rng(1)
    lab = rng.normal(50, 10, (192, 160, 3)).astype(np.float32)
    expected = lot_grid(lab[16:-16, 16:-16], 16)
    planes = lot_net.net_input(lab, _geometry(), expected, with_reference=True)
    assert planes.shape == (192, 160, lot_net.INPUT_CHANNELS)
    p = lot_net.probabilities(planes, _random_model())
    assert p.shape == (80, lot_net.OUTPUTS)
    assert np.allclose(p.sum(1), 1.0)
    # a change confined to lot A1 (bottom left of the board) moves A1's answer far more than H10's
    changed = lab.copy()
    changed[192 - 32 : 192 - 16, 16:32] += 30.0
    q = lot_net.probabilities(lot_net.net_input(changed, _geometry(), expected, True), _random_model())
    moved = np.abs(q - p).sum(1)
    assert moved[0] > 10 * moved[79]


def test_input_planes_take_the_board_lightness_off_and_lean_outward():
    lab = np.full((192, 160, 3), 60.0, np.float32)
    expected = np.full((80, 16, 16, 3), 60.0, np.float32)
    brighter = lot_net.net_input(lab + np.array([20.0, 0, 0], np.float32), _geometry(), expected + 20.0 * np.array([1, 0, 0]), False)
    planes = lot_net.net_input(lab, _geometry(), expected, False)
    assert np.allclose(planes[..., :6], brighter[..., :6], atol=1e-5)
    assert planes[..., 8].max() == 0.0
    lean_x, lean_y = planes[..., 6], planes[..., 7]
    # camera above x = 2 tiles, y = 2.5 tiles: left of it points lean left, above it lean up
    assert lean_x[:, 16].mean() < 0 < lean_x[:, -17].mean()
    assert lean_y[-17, :].mean() < 0 < lean_y[16, :].mean()


def test_marginals_and_taught_colours_keep_the_kind():
    rng = np.random.default_rng(2)
    joint = lot_net.structures(rng.dirichlet(np.ones(lot_net.OUTPUTS), size=80))
    assert joint.shape == (80, len(lot_net.CLASSES)) and np.allclose(joint.sum(1), 1.0)
    kind, dome, tower, cap = lot_net.marginals(joint)
    for part in (kind, dome, cap):
        assert np.allclose(part.sum(1), 1.0)
    assert np.allclose(tower[:, :3].sum(1), 1.0) and np.all(tower[:, 3] == 0)
    dome_taught = np.tile([0.0, 0.0, 0.0, 1.0], (80, 1))
    tower_taught = np.tile([0.0, 1.0, 0.0, 0.0], (80, 1))
    taught = lot_net.with_colours(joint, dome_taught, tower_taught)
    k2, d2, t2, c2 = lot_net.marginals(taught)
    assert np.allclose(k2, kind) and np.allclose(c2.sum(1), 1.0)
    assert np.allclose(d2[:, 3], 1.0) and np.allclose(t2[:, 1], 1.0)


def test_missing_weights_mean_no_network(tmp_path: Path):
    assert lot_net.load_model(tmp_path / "absent.npz") is None
    assert lot_net.confidence_map(None) is None


@pytest.mark.parametrize("with_reference", [False, True])
def test_reading_without_building_the_planes_gives_the_same_answer(with_reference: bool):
    rng = np.random.default_rng(3)
    lab = rng.normal(50, 10, (192, 160, 3)).astype(np.float32)
    expected = rng.normal(50, 10, (80, 16, 16, 3)).astype(np.float32)
    model = _random_model(4)
    planes = lot_net.net_input(lab, _geometry(), expected, with_reference)
    direct = lot_net.probabilities(planes, model)
    for _ in range(2):  # the second time from the per-pose cache
        read = lot_net.read_views(lab, _geometry(), expected, with_reference, model)
        assert np.allclose(read.mean, direct, atol=1e-5)


def test_mirrored_views_are_the_network_on_mirrored_planes_mirrored_back():
    rng = np.random.default_rng(5)
    lab = rng.normal(50, 10, (192, 160, 3)).astype(np.float32)
    expected = rng.normal(50, 10, (80, 16, 16, 3)).astype(np.float32)
    model = _random_model(6)
    planes = lot_net.net_input(lab, _geometry(), expected, False)
    views = []
    for left_right, top_bottom in lot_net.MIRRORS:
        mirrored = planes[:, ::-1] if left_right else planes
        mirrored = mirrored[::-1] if top_bottom else mirrored
        mirrored = mirrored.copy()
        mirrored[..., 6] *= -1.0 if left_right else 1.0  # the lean points the other way across the mirror
        mirrored[..., 7] *= -1.0 if top_bottom else 1.0
        grid = lot_net.probabilities(mirrored, model).reshape(10, 8, -1)  # row 1 first
        grid = grid[:, ::-1] if left_right else grid
        views.append((grid[::-1] if top_bottom else grid).reshape(80, -1))
    for count in (2, 4):
        got = lot_net.read_views(lab, _geometry(), expected, False, model, views=count).mean
        assert np.allclose(got, np.mean(views[:count], axis=0), atol=1e-5)
    assert not np.allclose(views[0], views[1], atol=1e-3)  # the views do differ: the average is not one of them


def _views_while_unsure(means: list[np.ndarray], below: float) -> int:
    """How many views the rule reads: the next mirror while the average's least sure lot is below ``below``."""
    for count in range(1, len(means) + 1):
        if float(means[count - 1].max(axis=1).min()) >= below:
            return count
    return len(means)


def test_an_unsure_board_is_read_again_in_the_mirrors_until_sure_and_a_sure_one_is_not():
    rng = np.random.default_rng(7)
    lab = rng.normal(50, 10, (192, 160, 3)).astype(np.float32)
    expected = rng.normal(50, 10, (80, 16, 16, 3)).astype(np.float32)
    model = _random_model(8)
    means = [lot_net.read_views(lab, _geometry(), expected, False, model, views=n).mean for n in (1, 2, 3, 4)]
    least_sure = float(means[0].max(axis=1).min())
    sure = lot_net.read_views(lab, _geometry(), expected, False, model, unsure_below=least_sure - 1e-3)
    assert sure.count == 1 and np.allclose(sure.mean, means[0], atol=1e-6)
    for below in (least_sure + 1e-3, 1.01):  # unsure of one view; never sure (all four are read)
        unsure = lot_net.read_views(lab, _geometry(), expected, False, model, unsure_below=below)
        count = _views_while_unsure(means, below)
        assert count > 1 and unsure.count == count
        assert np.allclose(unsure.mean, means[count - 1], atol=1e-6)
    assert lot_net.read_views(lab, _geometry(), expected, False, model, unsure_below=1.01).count == 4
    capped = lot_net.read_views(lab, _geometry(), expected, False, model, unsure_below=1.01, most=2)
    assert capped.count == 2 and np.allclose(capped.mean, means[1], atol=1e-6)  # the app's frames stop at two
    assert not np.allclose(means[0], means[1], atol=1e-3)
    # views read earlier are kept, not read again: only the missing ones are added
    first = lot_net.read_views(lab, _geometry(), expected, False, model)
    again = first.with_views(1, unsure_below=least_sure + 1e-3)
    count = _views_while_unsure(means, least_sure + 1e-3)
    assert again.count == count and np.allclose(again.mean, means[count - 1], atol=1e-6)
    assert first.with_views(1, unsure_below=least_sure - 1e-3) is first


def test_each_look_of_towers_has_its_own_shipped_network():
    usual, clear = lot_net.board_net("opaque"), lot_net.board_net("clear")
    assert all(path.is_file() for path in lot_net.WEIGHTS_FOR_TOWERS.values())
    assert usual is not None and clear is not None and (usual.towers, clear.towers) == ("opaque", "clear")
    assert usual.model is not clear.model
    assert not np.array_equal(usual.model["stem.weight"], clear.model["stem.weight"])
    assert clear.confidence_map is not None and 0.5 < clear.confidence_map["sure_from"] < 1.0
    with pytest.raises(ValueError, match="towers: 'glass'"):
        lot_net.board_net("glass")
