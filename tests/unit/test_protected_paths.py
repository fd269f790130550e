

def test_a_root_reached_through_a_link_keeps_its_name(tmp_path: Path) -> None:
    """What acpls opens is the resolved path, named below the root as the editor named the root
    (a home folder on another disk): the editor's buffer of it is found, and a link inside the
    workspace that leads out is still outside."""
    real = tmp_path / "disk" / "proj"
    (real / "src").mkdir(parents=True)
    (real / "src" / "a.py").write_text("a\n")
    named = tmp_path / "proj"
    named.symlink_to(real, target_is_directory=True)
    (real / "alias.py").symlink_to(real / "src" / "a.py")
    (real / "out").symlink_to(tmp_path, target_is_directory=True)
    policy = PathPolicy([str(named)])
    decision = policy.check(str(named / "alias.py"))
    assert decision.inside
    assert decision.resolved == str(real / "src" / "a.py")
    assert decision.usable == str(named / "src" / "a.py")
    assert os.path.realpath(decision.usable) == decision.resolved
    escaped = policy.check(str(named / "out" / "secret"))
    assert not escaped.inside and escaped.usable == str(tmp_path / "secret")
