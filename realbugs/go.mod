module github.com/racekit/racekit/realbugs

go 1.26.0
