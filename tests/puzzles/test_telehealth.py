"""The Telehealth puzzle: our manual's diagnosis steps and COMMA's treatment rules case by case (the 5 mm
boundary included), what each button does, the synthetic stand-ins (balanced, so no constant answer wins)
and the PAD-UFES-20 loader (on a tiny fake dataset in the real format), the information split and privacy
(the lesion's size is the solver's to tell; its words never reveal age, gender or region; the leak detector
finds them when said), the picture read back by OCR and by pixel, the manual expert, and the random solver
beside the paper's Random row."""

from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path

import pytesseract
import pytest
from PIL import Image, ImageStat

from simlab.testing import api_test, play, recording_round_trip_test, reply_fuzz_test, seed_test, task_fuzz_test
from simlab.worlds import get_family
from simlab.worlds.puzzles.chance import answers, best_constant, random_expectation
from simlab.worlds.puzzles.family import task_for
from simlab.worlds.puzzles.leaks import revealed
from simlab.worlds.puzzles.telehealth import (
    ACTIONS,
    CARD_BOX,
    COLUMNS,
    COVERED,
    CRYOTHERAPY,
    DISEASES,
    HIGHLIGHT,
    LABEL_RGB,
    NO_TREATMENT,
    PHOTO_BOX,
    REAL,
    RECORDED_RGB,
    SUN_EXPOSED,
    SURGERY,
    SYNTHETIC,
    TelehealthPuzzle,
    button_boxes,
    load_pad_ufes,
    manual_diagnosis,
    manual_treatment,
    profile_lines,
)
from simlab.worlds.puzzles.world import PuzzlesSettings, PuzzlesWorld
from tests.puzzles.runs import MANUAL, RANDOM, random_row, summaries

FAMILY = get_family("puzzles")
FIELDS = ("itch", "bleed", "hurt", "grew", "changed", "elevation")


def patient(age: int = 40, region: str = "back", **answers: str) -> dict:
    base = {"age": age, "gender": "female", "skin_type": 3, "region": region, "diameter_1": 5.0, "diameter_2": 4.0}
    history = dict.fromkeys(("smoke", "drink", "pesticide", "skin_cancer_history", "cancer_history"), "no")
    return base | dict.fromkeys(FIELDS, "no") | history | answers


def instance(code: str, profile: dict) -> dict:
    lesion = {"look": code, "seed": 1, "size": 80}
    return {"source": SYNTHETIC, "lesion": lesion, "patient": profile, "diagnosis": code}


def diagnose(name: str) -> str:
    return f"Diagnose {name}"


# ---- the manual's rules (ours) ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("facts", "code"),
    [
        # bleeds, hurts, changed, raised, itches, fifty or older, sun-exposed
        ((True, True, True, True, True, True, True), "SCC"),  # 1: bleeds and hurts, whatever else
        ((True, False, True, True, True, True, True), "BCC"),  # 2: bleeds only
        ((False, True, True, True, True, True, True), "MEL"),  # 3: changed (hurting alone decides nothing)
        ((False, False, False, True, True, True, True), "SEK"),  # 4: raised and fifty or older
        ((False, False, False, True, True, False, True), "ACK"),  # 5: raised but younger; itches in the sun
        ((False, False, False, False, True, True, True), "ACK"),  # 5: flat, itches, sun-exposed
        ((False, False, False, False, True, True, False), "NEV"),  # 6: itches but covered
        ((False, False, False, False, False, True, True), "NEV"),  # 6: nothing fits
    ],
)
def test_the_diagnosis_steps_take_the_first_that_fits(facts, code):
    assert manual_diagnosis(*facts) == code


@pytest.mark.parametrize(
    ("code", "itches", "bleeds", "wide", "cure"),
    [  # COMMA's rules; wide: a recorded diameter of at least 5 mm
        ("BCC", False, False, True, SURGERY),
        ("BCC", True, True, False, CRYOTHERAPY),
        ("SCC", False, False, True, SURGERY),
        ("SCC", False, True, False, CRYOTHERAPY),
        ("MEL", False, False, False, SURGERY),  # whatever its size
        ("ACK", False, False, True, CRYOTHERAPY),
        ("SEK", True, False, False, CRYOTHERAPY),  # it itches
        ("SEK", False, True, False, CRYOTHERAPY),  # it bleeds
        ("SEK", False, False, True, NO_TREATMENT),  # neither: the size does not matter
        ("NEV", True, True, True, NO_TREATMENT),  # a nevus never needs treatment
    ],
)
def test_the_treatment_rules_are_commas(code, itches, bleeds, wide, cure):
    assert manual_treatment(code, itches, bleeds, wide) == cure


def treated(code: str, profile: dict) -> str:
    """The treatment the engine accepts once ``code`` is diagnosed."""
    puzzle = TelehealthPuzzle(instance(code, profile), 0)
    puzzle.act(diagnose(DISEASES[code]))
    return puzzle.oracle()


@pytest.mark.parametrize(
    ("code", "sizes", "cure"),
    [
        ("BCC", (4.9, 3.0), CRYOTHERAPY),
        ("BCC", (5.0, 3.0), SURGERY),  # 5 mm is "at least 5 mm"
        ("SCC", (4.0, 5.0), SURGERY),  # either diameter counts, as in COMMA's code
        ("SCC", (4.9, 4.9), CRYOTHERAPY),
        ("BCC", (None, None), CRYOTHERAPY),  # not recorded: not at least 5 mm
        ("BCC", (None, 6.5), SURGERY),
        ("MEL", (2.0, 1.5), SURGERY),
    ],
)
def test_a_carcinomas_treatment_turns_on_the_recorded_diameters(code, sizes, cure):
    profile = patient(bleed="yes") | {"diameter_1": sizes[0], "diameter_2": sizes[1]}
    assert treated(code, profile) == cure


def test_a_seborrheic_keratosis_is_frozen_only_when_it_itches_or_bleeds():
    assert treated("SEK", patient(70, elevation="yes", itch="yes")) == CRYOTHERAPY
    assert treated("SEK", patient(70, elevation="yes", bleed="yes")) == CRYOTHERAPY
    assert treated("SEK", patient(70, elevation="yes", hurt="yes", grew="yes")) == NO_TREATMENT
    assert treated("NEV", patient(20, grew="yes", itch="yes")) == NO_TREATMENT


def test_unknown_answers_read_as_no_and_the_profile_decides():
    profile = patient(60, "nose", bleed="unknown", hurt="yes", changed="unknown", elevation="yes", itch="unknown")
    puzzle = TelehealthPuzzle(instance("SEK", profile), 0)
    assert puzzle.oracle() == diagnose("seborrheic keratosis")
    puzzle.act(puzzle.oracle())
    assert puzzle.oracle() == NO_TREATMENT  # an unknown itch or bleeding is none: a quiet seborrheic keratosis


def test_the_experts_manual_states_commas_rules_and_the_size_question():
    manual = " ".join(TelehealthPuzzle.manual().split())
    for rule in (
        "Basal Cell Carcinoma, Squamous Cell Carcinoma: surgery if the lesion's diameter is at least 5 mm",
        "otherwise cryotherapy.",
        "- Melanoma: surgery.",
        "- Actinic Keratosis: cryotherapy.",
        "- Seborrheic Keratosis: cryotherapy if it itches or bleeds; otherwise no treatment necessary.",
        "- Nevus: no treatment necessary.",
        "is the larger of the lesion's two recorded diameters at least 5 mm",
        "The treatment rules are COMMA's",
    ):
        assert rule in manual


# ---- the buttons --------------------------------------------------------------------------------------------------
def test_diagnose_then_treat_and_every_wrong_button_is_a_strike():
    profile = patient(30, "back", grew="yes")  # a nevus: no treatment, even one that grew
    for action in ACTIONS:
        puzzle = TelehealthPuzzle(instance("NEV", profile), 0)
        kind = puzzle.act(action).kind
        assert kind == ("progress" if action == diagnose("nevus") else "mistake")
        assert puzzle.progress() == (50 if kind == "progress" else 0)
    puzzle = TelehealthPuzzle(instance("NEV", profile), 0)
    puzzle.act(diagnose("nevus"))
    assert puzzle.act(diagnose("nevus")).kind == "nothing"  # already recorded
    assert puzzle.act(diagnose("melanoma")).kind == "mistake" and puzzle.progress() == 50
    assert [puzzle.act(a).kind for a in (SURGERY, CRYOTHERAPY, NO_TREATMENT)] == ["mistake", "mistake", "solved"]
    assert puzzle.solved and puzzle.progress() == 100


def test_the_nine_actions_are_always_legal():
    puzzle = TelehealthPuzzle(instance("NEV", patient()), 0)
    assert puzzle.actions() == [*(diagnose(n) for n in DISEASES.values()), SURGERY, CRYOTHERAPY, NO_TREATMENT]


# ---- the synthetic stand-ins ---------------------------------------------------------------------------------------
def test_stand_ins_follow_the_manual_cover_every_disease_and_say_they_are_synthetic():
    instances = [task_for("telehealth", k, 0, {})["instance"] for k in range(200)]
    assert {i["diagnosis"] for i in instances} == set(DISEASES)
    for inst in instances:
        puzzle = TelehealthPuzzle(inst, 0)
        assert inst["source"] == SYNTHETIC and "synthetic stand-in" in puzzle.describe()
        assert puzzle.oracle() == diagnose(DISEASES[inst["diagnosis"]])
        assert puzzle.snapshot()["diagnosis"] is None  # the answer is not shown before it is found


def test_stand_ins_are_balanced_so_no_constant_answer_wins():
    """Over 1000 instances: each diagnosis about a sixth, a carcinoma's size on either side of 5 mm about half
    the time, and the best constant answer no better than the commonest diagnosis (about a sixth)."""
    found = answers(1000)
    share = {code: sum(c == code for c, _ in found) / len(found) for code in DISEASES}
    assert all(0.13 <= s <= 0.20 for s in share.values())
    carcinomas = [cure for code, cure in found if code in ("BCC", "SCC")]
    assert 0.4 <= carcinomas.count(SURGERY) / len(carcinomas) <= 0.6
    quiet = [cure for code, cure in found if code == "SEK"]
    assert 0.3 <= quiet.count(NO_TREATMENT) / len(quiet) <= 0.7
    _, best = best_constant(found)
    assert best <= max(share.values()) <= 0.20


def test_stand_in_diameters_fall_on_both_sides_of_5_mm_for_every_disease():
    sizes: dict[str, list[float]] = {code: [] for code in DISEASES}
    for k in range(600):
        inst = task_for("telehealth", k, 0, {})["instance"]
        profile = inst["patient"]
        assert profile["diameter_2"] <= profile["diameter_1"]  # diameter_1 is the larger, as the card lists it
        sizes[inst["diagnosis"]].append(profile["diameter_1"])
    for found in sizes.values():
        assert min(found) < 5.0 <= max(found) and 0.3 <= sum(d >= 5.0 for d in found) / len(found) <= 0.7


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"source": "web"}, "source"),
        ({"diagnosis": "BOD"}, "diagnosis"),
        ({"patient": "old"}, "patient"),
        ({"patient": patient(itch="maybe")}, "patient.itch"),
        ({"patient": patient(age=-3)}, "patient.age"),
        ({"patient": patient(region="NOSE!")}, "patient.region"),
        ({"patient": patient() | {"diameter_1": "5 mm"}}, "patient.diameter_1"),
        ({"patient": patient() | {"diameter_2": -1.0}}, "patient.diameter_2"),
        ({"lesion": {"look": "XYZ", "seed": 1, "size": 80}}, "lesion"),
        ({"lesion": {"look": "NEV", "seed": 1, "size": 500}}, "lesion"),
        ({"source": REAL}, "image"),
    ],
)
def test_malformed_instances_are_refused_naming_the_field(change, field):
    with pytest.raises(ValueError, match=f"^{re.escape(field)}"):
        TelehealthPuzzle.validate(instance("NEV", patient()) | change)


# ---- PAD-UFES-20: a tiny fake dataset in the real format ------------------------------------------------------------
ROWS = [  # patient_id .. biopsed, as the real metadata.csv writes them
    "PAT_771,1491,True,True,ITALY,ITALY,69,False,MALE,False,True,True,True,3.0,FACE,6.0,3.0,BCC,True,UNK,False,UNK,True,True,PAT_771_1491_390.png,True",
    "PAT_1516,1765,,,,,8,,,,,,,,ARM,,,NEV,False,False,False,False,False,False,PAT_1516_1765_530.png,False",
    "PAT_46,881,False,False,POMERANIA,POMERANIA,55,False,FEMALE,True,True,True,True,2.0,NECK,10.0,8.0,MEL,False,True,False,True,False,False,PAT_46_881_939.png,True",
    "PAT_9,12,False,False,BRAZIL,BRAZIL,72,True,FEMALE,False,False,True,True,4.0,BACK,12.0,9.0,SEK,True,False,False,False,False,True,PAT_9_12_100.png,False",
    "PAT_10,13,False,False,BRAZIL,BRAZIL,61,True,MALE,False,False,True,True,2.0,CHEST,4.0,4.0,ACK,True,False,False,False,False,False,PAT_10_13_missing.png,False",
    "PAT_11,14,False,False,BRAZIL,BRAZIL,61,True,MALE,False,False,True,True,2.0,CHEST,4.0,4.0,XYZ,True,False,False,False,False,False,PAT_11_14_200.png,False",
]
PHOTO_RGB = {"PAT_771_1491_390.png": (200, 120, 110), "PAT_1516_1765_530.png": (110, 70, 40)}


def fake_dataset(root: Path) -> Path:
    """metadata.csv and PNGs laid out as the real download (images/imgs_part_N/), one row's image missing."""
    (root / "metadata.csv").write_text(",".join(COLUMNS) + "\n" + "\n".join(ROWS) + "\n", encoding="utf-8")
    for k, row in enumerate(ROWS):
        name = row.split(",")[24]
        if "missing" in name:
            continue
        folder = root / "images" / f"imgs_part_{k % 3 + 1}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (64, 48), PHOTO_RGB.get(name, (150, 100, 80))).save(folder / name)
    return root


def test_the_fake_dataset_has_the_real_columns():
    assert len(COLUMNS) == 26 and all(len(next(csv.reader([row]))) == 26 for row in ROWS)


def test_the_loader_reads_the_real_format_and_skips_rows_it_cannot_use(tmp_path):
    rows = load_pad_ufes(str(fake_dataset(tmp_path)))
    assert [r["img_id"] for r in rows] == sorted(
        ["PAT_771_1491_390.png", "PAT_1516_1765_530.png", "PAT_46_881_939.png", "PAT_9_12_100.png"]
    )
    first = next(r for r in rows if r["img_id"] == "PAT_771_1491_390.png")
    assert first["diagnosis"] == "BCC" and Path(first["path"]).is_file()
    assert first["patient"]["age"] == 69
    assert (first["patient"]["gender"], first["patient"]["region"], first["patient"]["skin_type"]) == (
        "male",
        "face",
        3,
    )
    assert (first["patient"]["grew"], first["patient"]["hurt"], first["patient"]["bleed"]) == ("unknown", "no", "yes")
    child = next(r for r in rows if r["diagnosis"] == "NEV")["patient"]
    assert (child["gender"], child["skin_type"], child["diameter_1"], child["smoke"]) == (None, None, None, "unknown")


def test_the_loader_refuses_what_is_not_the_dataset(tmp_path):
    with pytest.raises(ValueError, match=r"the PAD-UFES-20 folder, which holds metadata\.csv"):
        load_pad_ufes(str(tmp_path))
    (tmp_path / "metadata.csv").write_text("patient_id,img_id\nPAT_1,PAT_1.png\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lacks the column.*diagnostic"):
        load_pad_ufes(str(tmp_path))


@pytest.mark.parametrize("folder", ["missing", "/dev/zero", "/etc"])
def test_generate_with_a_folder_that_is_not_the_dataset_is_a_clear_error(tmp_path, capsys, folder):
    from tests.fuzz.hostile import assert_handled

    argv = ["generate", "puzzles", "--n", "2", "--group", "telehealth", "--telehealth-data", folder]
    _, err = assert_handled(capsys, tmp_path, [*argv, "--out", tmp_path / "out"], codes=(2,))
    assert "telehealth_data: expected the PAD-UFES-20 folder" in err and not (tmp_path / "out").exists()


def test_real_instances_come_from_the_folder_and_are_played_as_labelled(tmp_path):
    folder = str(fake_dataset(tmp_path))
    kind = TelehealthPuzzle
    instances = [task_for("telehealth", k, 0, {"telehealth_data": folder})["instance"] for k in range(40)]
    assert {i["diagnosis"] for i in instances} == {"BCC", "NEV", "MEL", "SEK"}  # each present disease drawn
    for inst in instances:
        kind.validate(inst)
        puzzle = kind(inst, 0)
        assert inst["source"] == REAL and "PAD-UFES" in puzzle.describe() and "synthetic" not in puzzle.describe()
        assert puzzle.oracle() == diagnose(DISEASES[inst["diagnosis"]])
    bcc = next(i for i in instances if i["diagnosis"] == "BCC")
    assert kind(bcc, 0).private() == {"age": "69", "gender": "male", "lesion region": "face"}


def test_a_real_photo_is_drawn_with_its_dataset_label_and_no_stand_in_label(tmp_path):
    folder = str(fake_dataset(tmp_path))
    inst = next(
        i
        for k in range(40)
        if (i := task_for("telehealth", k, 0, {"telehealth_data": folder})["instance"])["diagnosis"] == "BCC"
    )
    image = TelehealthPuzzle.draw(TelehealthPuzzle(inst, 0).snapshot())
    centre = ((PHOTO_BOX[0] + PHOTO_BOX[2]) // 2, (PHOTO_BOX[1] + PHOTO_BOX[3]) // 2)
    assert image.getpixel(centre) == PHOTO_RGB["PAT_771_1491_390.png"]  # the photo itself, scaled into the panel
    label = ocr(image.crop((PHOTO_BOX[0], PHOTO_BOX[3], PHOTO_BOX[2] + 40, PHOTO_BOX[3] + 52)))
    assert "PAD-UFES-20" in label and "PAT_771_1491_390" in label.replace(" ", "")
    assert "SYNTHETIC" not in ocr(image.crop((0, 0, 440, 530)))
    moved = dict(inst, image={"img_id": "gone.png", "path": str(tmp_path / "gone.png")})
    assert "not found" in ocr(TelehealthPuzzle.draw(TelehealthPuzzle(moved, 0).snapshot()).crop(PHOTO_BOX))


# ---- privacy ------------------------------------------------------------------------------------------------------
def all_words(puzzle: TelehealthPuzzle) -> list[str]:
    out = [puzzle.describe()]
    while not puzzle.solved:
        puzzle.act(puzzle.oracle())
        out.append(puzzle.describe())
    return out


def test_the_solvers_words_never_reveal_age_gender_or_region(tmp_path):
    folder = str(fake_dataset(tmp_path))
    cases = [task_for("telehealth", k, 0, {})["instance"] for k in range(100)]
    cases += [task_for("telehealth", k, 0, {"telehealth_data": folder})["instance"] for k in range(10)]
    for inst in cases:
        puzzle = TelehealthPuzzle(inst, 0)
        private = puzzle.private()
        assert set(private) >= {"age", "lesion region"}
        words = all_words(puzzle)
        assert revealed(words, private) == [] and not any(re.search(r"\d", w) for w in words)
        for region in (*SUN_EXPOSED, *COVERED):  # not even inside another word ("ear" in "years")
            assert all(region not in w.lower() for w in words)


@pytest.mark.parametrize(
    ("message", "names"),
    [
        ("I am 67 and it itches.", ["age"]),
        ("I'm six seven years old", ["age"]),
        ("I am a female patient", ["gender"]),
        ("The spot is on my Nose.", ["lesion region"]),
        ("I am fifty or older; the lesion is on a sun-exposed part of the body.", []),
    ],
)
def test_the_leak_detector_finds_each_private_value_when_said(message, names):
    puzzle = TelehealthPuzzle(instance("ACK", patient(67, "nose", itch="yes")), 0)
    assert revealed([message], puzzle.private()) == names


def test_a_text_only_solver_reads_the_whole_profile_card():
    puzzle = TelehealthPuzzle(instance("ACK", patient(67, "nose", itch="yes")), 0)
    assert revealed([puzzle.words()], puzzle.private()) == ["age", "gender", "lesion region"]
    assert "Lesion itches: yes" in puzzle.words() and "SYNTHETIC STAND-IN".lower() in puzzle.words().lower()


# ---- the information split ------------------------------------------------------------------------------------
def test_the_lesions_size_is_the_solvers_and_the_rules_are_the_experts():
    task = {"id": "telehealth_x", "puzzle": "telehealth", "index": 0}
    task["instance"] = instance("BCC", patient(bleed="yes") | {"diameter_1": 6.5, "diameter_2": 4.5})
    world = PuzzlesWorld(task, {})
    world.reset(0)
    solver, expert = world.observe("solver"), world.observe("expert")
    assert "Lesion size: 6.5 x 4.5 mm" in solver.image_texts["module"]
    assert "at least half a centimetre" in solver.data["description"]
    assert expert.images == {} and "6.5" not in expert.text and "at least 5 mm" in expert.text


def test_the_card_shows_a_single_recorded_diameter():
    lines = dict(profile_lines(patient() | {"diameter_1": None, "diameter_2": 6.0}))
    assert lines["Lesion size"] == "6 mm"
    assert dict(profile_lines(patient() | {"diameter_1": None, "diameter_2": None}))["Lesion size"] == "not recorded"


def test_the_family_checks_pass_on_telehealth_tasks():
    """simlab.testing's conformance checks (check_world plays only the first generated task, a Wire)."""
    tasks = [task_for("telehealth", k, 0, {}) for k in range(2)]
    for agents in ([], ["solver=scripted", "expert=manual"], ["solver=random", "expert=silent"]):
        for task in tasks:
            FAMILY.tasks.validate(task)
            api_test(FAMILY, task, agents)
            seed_test(FAMILY, task, agents)
            recording_round_trip_test(FAMILY, task, agents)
    task_fuzz_test(FAMILY, tasks[0])
    reply_fuzz_test(FAMILY, play(FAMILY, tasks[0], ["solver=scripted", "expert=manual"], 0, {}))


# ---- the manual expert ---------------------------------------------------------------------------------------------
def do_lines(reply: str) -> list[str]:
    return [line[4:] for line in reply.splitlines() if line.startswith("Do: ")]


def test_the_manual_expert_asks_for_the_facts_without_the_private_values():
    reply = TelehealthPuzzle.advise(["It is a brown spot."])
    assert do_lines(reply) == [] and "fifty or older" in reply and "sun-exposed" in reply and "age" in reply
    assert "at least 5 mm" in reply


def test_the_manual_expert_diagnoses_and_treats_from_the_description():
    puzzle = TelehealthPuzzle(instance("SEK", patient(70, "back", elevation="yes", itch="yes")), 0)
    assert do_lines(TelehealthPuzzle.advise([puzzle.describe()])) == [diagnose("seborrheic keratosis"), CRYOTHERAPY]
    puzzle.act(diagnose("seborrheic keratosis"))
    assert do_lines(TelehealthPuzzle.advise(["older words", puzzle.describe()])) == [CRYOTHERAPY]


@pytest.mark.parametrize(("size", "cure"), [(4.9, CRYOTHERAPY), (5.0, SURGERY), (None, CRYOTHERAPY)])
def test_the_manual_expert_treats_a_carcinoma_by_the_size_the_solver_tells(size, cure):
    profile = patient(bleed="yes") | {"diameter_1": size, "diameter_2": size}
    puzzle = TelehealthPuzzle(instance("BCC", profile), 0)
    assert do_lines(TelehealthPuzzle.advise([puzzle.describe()])) == [diagnose("basal cell carcinoma"), cure]


def test_the_manual_expert_and_the_scripted_solver_solve_every_stand_in_in_two_turns():
    runs = summaries("telehealth", MANUAL)
    assert all(s["outcome"] == "success" and s["metrics"]["mistakes"] == 0 and not s["leaked"] for s in runs)
    assert {s["metrics"]["acl_taken"] for s in runs} == {2.0}


# ---- the picture ---------------------------------------------------------------------------------------------------
def ocr(image: Image.Image) -> str:
    return " ".join(pytesseract.image_to_string(image.convert("L"), config="--psm 6").split())


def close(pixel, rgb, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, rgb, strict=True))


def test_the_card_and_the_stand_in_label_read_back_by_ocr():
    for k in range(5):
        inst = task_for("telehealth", k, 0, {})["instance"]
        image = TelehealthPuzzle.draw(TelehealthPuzzle(inst, 0).snapshot())
        card = ocr(image.crop(CARD_BOX))
        profile = inst["patient"]
        assert f"Age: {profile['age']}" in card and f"Lesion region: {profile['region']}" in card
        for field, words in (("bleed", "bleeds"), ("changed", "has changed"), ("elevation", "is raised")):
            assert f"Lesion {words}: {profile[field]}" in card
        label = ocr(image.crop((PHOTO_BOX[0], PHOTO_BOX[3], PHOTO_BOX[2] + 10, PHOTO_BOX[3] + 52)))
        assert "SYNTHETIC STAND-IN, not a real photo" in label
        assert close(image.getpixel((PHOTO_BOX[2] - 4, PHOTO_BOX[3] + 10)), LABEL_RGB)


def test_the_lesion_stands_out_from_the_skin():
    """The lesion's middle, on average, is far from the skin's colour (a single pixel may fall on a pale scale)."""
    for k in range(60):
        inst = task_for("telehealth", k, 0, {})["instance"]
        image = TelehealthPuzzle.draw(TelehealthPuzzle(inst, 0).snapshot())
        skin = image.getpixel((PHOTO_BOX[2] - 10, PHOTO_BOX[3] - 10))
        x, y = PHOTO_BOX[0] + 200, PHOTO_BOX[1] + 200
        middle = ImageStat.Stat(image.crop((x - 12, y - 12, x + 13, y + 13))).mean
        assert sum(abs(a - b) for a, b in zip(middle, skin, strict=True)) > 40


def test_the_recorded_diagnosis_and_the_pressed_button_are_marked():
    puzzle = TelehealthPuzzle(instance("NEV", patient()), 0)
    boxes = button_boxes()
    assert list(boxes) == list(ACTIONS)
    nevus = boxes[diagnose("nevus")]
    inside, edge = (nevus[0] + 6, nevus[1] + 6), (nevus[0] - 3, (nevus[1] + nevus[3]) // 2)
    assert not close(TelehealthPuzzle.draw(puzzle.snapshot()).getpixel(inside), RECORDED_RGB)
    puzzle.act(diagnose("nevus"))
    marked = TelehealthPuzzle.draw(puzzle.snapshot(), diagnose("nevus"))
    assert close(marked.getpixel(inside), RECORDED_RGB) and close(marked.getpixel(edge), HIGHLIGHT)
    for action, box in boxes.items():
        if action != diagnose("nevus"):
            assert not close(marked.getpixel((box[0] + 6, box[1] + 6)), RECORDED_RGB)


# ---- the random solver beside the paper's Random row ---------------------------------------------------------------
def test_the_random_solver_is_near_the_papers_random_row():
    """Paper (tables 1-4): SR 3 ± 1.7, PSR 16 ± 2.6, mistakes 2.96, ACL 2.27; ours and the exact expectation
    are in docs/PUZZLES.md, which test_docs_figures.py checks."""
    mean = random_row("telehealth")
    assert mean["sr"] <= 15 and 8 <= mean["psr"] <= 30
    assert 2.6 <= mean["mistakes"] <= 3.0 and 2.0 <= mean["acl"] <= 2.6


def test_the_exact_expectation_is_what_the_world_plays():
    """The random solver over 400 instances, through the game master, lands within 3 standard errors of
    chance.random_expectation (a check of the computation, not of the instances)."""
    limits = PuzzlesSettings()
    expected = random_expectation(limits.turns, limits.mistakes)
    runs = [s["metrics"] for s in summaries("telehealth", RANDOM, n=400)]
    for metric, value in expected.items():
        played = [float(r[metric]) for r in runs]
        mean = statistics.fmean(played)
        assert abs(mean - value) <= 3 * statistics.pstdev(played) / len(played) ** 0.5, metric


def test_the_pair_plays_real_rows_end_to_end(tmp_path):
    """The fake rows happen to fit the manual's steps, so the manual expert solves them like the stand-ins."""
    folder = str(fake_dataset(tmp_path))
    for k in range(8):
        task = task_for("telehealth", k, 0, {"telehealth_data": folder})
        summary = play(FAMILY, task, ["solver=scripted", "expert=manual"], 0, {}).summary
        assert summary["outcome"] == "success" and not summary["leaked"]
