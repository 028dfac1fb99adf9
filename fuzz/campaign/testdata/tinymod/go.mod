module tinymod

go 1.26
